package dev.meridian.internal.pgv;

import java.util.List;

/**
 * One rule a message breaks: where ({@code path} from the checked message), what ({@code value}
 * as proto3 JSON writes it, clipped; null when the value is absent), which rule ({@code rule},
 * PGV's name such as {@code duration.gt} or {@code message.required}) and why, in words ({@code
 * reason}, e.g. {@code must be greater than 0s}).
 */
public record Violation(List<Step> path, String value, String rule, String reason) {
  public Violation {
    path = List.copyOf(path);
  }

  /** The path as a reader writes it: {@code load_assignment.endpoints[0].lb_endpoints[1]}. */
  public String field() {
    StringBuilder b = new StringBuilder();
    for (Step s : path) {
      if (s instanceof Step.Field f) {
        if (b.length() > 0) {
          b.append('.');
        }
        b.append(f.name());
      } else if (s instanceof Step.Index i) {
        b.append('[').append(i.index()).append(']');
      } else if (s instanceof Step.Key k) {
        b.append("[\"").append(k.key()).append("\"]");
      }
    }
    return b.toString();
  }

  /** {@code connect_timeout: -1s must be greater than 0s (duration.gt)}. */
  @Override
  public String toString() {
    String f = field();
    return (f.isEmpty() ? "" : f + ": ") + (value == null ? "" : value + " ") + reason
        + " (" + rule + ")";
  }
}
