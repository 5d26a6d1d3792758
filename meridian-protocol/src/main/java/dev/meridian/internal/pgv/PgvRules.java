package dev.meridian.internal.pgv;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.MessageOrBuilder;
import java.time.Clock;
import java.util.List;
import java.util.function.Function;

/**
 * The protoc-gen-validate rules annotated in a message type's descriptor ({@code validate.rules}
 * on fields, {@code validate.required} on oneofs, {@code validate.disabled} and {@code
 * validate.ignored} on messages), read once per type and compiled into checks. Envoy checks every
 * resource it receives against them and rejects the whole response for one violation.
 * Thread-safe: one instance serves every check of a process part.
 */
public final class PgvRules {
  /**
   * {@code anyTypes}: the descriptor of a message packed in an {@code Any}, by type URL, or null
   * when the type is unknown (its content is then not checked); {@code clock}: "now", for the
   * {@code lt_now}, {@code gt_now} and {@code within} rules of timestamps.
   */
  public PgvRules(Function<String, Descriptor> anyTypes, Clock clock) {
    throw new UnsupportedOperationException("not yet");
  }

  /** Every violation in {@code message} and the messages reachable from it, in field order. */
  public List<Violation> check(MessageOrBuilder message) {
    throw new UnsupportedOperationException("not yet");
  }
}
