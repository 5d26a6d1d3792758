package dev.meridian.internal.pgv;

/** The compiled rules of one value (a field's, an element's, a map key's): its first failure. */
@FunctionalInterface
interface ValueCheck {
  /** Null when {@code value} passes every rule. */
  Failure test(Object value);
}
