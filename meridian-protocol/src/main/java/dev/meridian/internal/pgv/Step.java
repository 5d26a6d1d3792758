package dev.meridian.internal.pgv;

/**
 * One step of the path from a checked message to the value a rule refused. A message packed in an
 * {@code Any} adds no step of its own: in YAML and JSON its fields sit beside {@code @type}.
 */
public sealed interface Step {
  /** A field, by its proto name ({@code connect_timeout}). */
  record Field(String name) implements Step {}

  /** An element of a repeated field. */
  record Index(int index) implements Step {}

  /** The value under a map key, the key as proto3 JSON writes it. */
  record Key(String key) implements Step {}
}
