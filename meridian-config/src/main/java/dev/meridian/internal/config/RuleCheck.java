package dev.meridian.internal.config;

import com.google.protobuf.Descriptors.Descriptor;
import dev.meridian.internal.pgv.PgvRules;
import java.time.Clock;
import java.util.function.Function;

/**
 * {@code --validation}: whether every resource is checked against the rules Envoy checks it
 * against (the protoc-gen-validate rules of its API protos) before anything is served. Envoy
 * rejects a whole response for one broken rule, so one typo would be refused by the whole fleet.
 */
public enum RuleCheck {
  /** Envoy's rules: a config that breaks one is rejected whole (the default). */
  ENVOY,
  /** No rule checks: what Envoy would refuse is served, and refused by every Envoy. */
  OFF;

  /** The rules for {@code this} mode over the API's types; null for {@link #OFF}. */
  PgvRules rules(Function<String, Descriptor> byFullName, Clock clock) {
    if (this == OFF) {
      return null;
    }
    return new PgvRules(url -> byFullName.apply(url.substring(url.lastIndexOf('/') + 1)), clock);
  }
}
