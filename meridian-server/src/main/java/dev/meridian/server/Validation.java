package dev.meridian.server;

/**
 * What {@link Publisher} checks before a publication goes in force: the checks {@code meridian
 * serve} runs on every file reload (references between resources, what grpc-java clients would
 * reject). Off by default: an application usually publishes what it computed.
 */
public enum Validation {
  /** No checks: every publication goes in force. */
  OFF,
  /** Every check runs; findings come back as {@link Publication#warnings()} and are logged. */
  WARN,
  /**
   * As {@link #WARN}, but a publication whose result has dangling references (a route naming a
   * cluster no group serves, ...) is refused with {@link InvalidConfigException}: nothing changes.
   */
  REJECT
}
