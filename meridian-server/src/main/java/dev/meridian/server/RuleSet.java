package dev.meridian.server;

/**
 * The rules every published resource is checked against before it goes in force ({@link
 * Meridian.Builder#validation(RuleSet)}), as {@code meridian serve --validation} checks files.
 */
public enum RuleSet {
  /**
   * The rules Envoy checks each resource against (the validation rules annotated in its API
   * protos): Envoy rejects a whole response for one broken rule, so a publication that breaks
   * one is refused with {@link InvalidConfigException} naming every problem, and nothing changes.
   * The default.
   */
  ENVOY,
  /** No rule checks: what Envoy would refuse is served, and refused by every Envoy it reaches. */
  OFF
}
