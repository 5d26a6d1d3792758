package dev.meridian.internal.protocol;

/** The {@link Sharing} implementations, for scenarios run with each (issue 19). */
enum Sharings {
  PLAIN, INTERNING;

  /** A new one, as a new hub would have. */
  Sharing create() {
    return this == PLAIN ? Sharing.plain() : Sharing.interning();
  }
}
