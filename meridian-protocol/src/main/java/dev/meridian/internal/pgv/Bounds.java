package dev.meridian.internal.pgv;

import java.util.Comparator;
import java.util.function.Function;

/**
 * PGV's {@code lt}/{@code lte}/{@code gt}/{@code gte} on one value. With an upper and a lower
 * bound the value must lie between them, unless the upper bound is not above the lower one: then
 * the range between them is the one excluded ({@code lt: 0, gt: 10}: below 0 or above 10). As in
 * PGV, {@code lt} wins over {@code lte} and {@code gt} over {@code gte} when both are given.
 */
final class Bounds<T> {
  private final Comparator<T> order;
  private final T upper;
  private final boolean upperInclusive;
  private final T lower;
  private final boolean lowerInclusive;
  private final boolean outside;
  private final Failure tooHigh;
  private final Failure tooLow;

  private Bounds(Comparator<T> order, T upper, boolean upperInclusive, String upperRule, T lower,
      boolean lowerInclusive, String lowerRule, Function<T, String> show) {
    this.order = order;
    this.upper = upper;
    this.upperInclusive = upperInclusive;
    this.lower = lower;
    this.lowerInclusive = lowerInclusive;
    String up = upper == null ? null
        : (upperInclusive ? "at most " : "less than ") + show.apply(upper);
    String low = lower == null ? null
        : (lowerInclusive ? "at least " : "greater than ") + show.apply(lower);
    if (upper != null && lower != null) {
      outside = order.compare(upper, lower) <= 0;
      String reason = outside ? "must be " + up + " or " + low : "must be " + low + " and " + up;
      tooHigh = new Failure(upperRule, reason);
      tooLow = new Failure(outside ? upperRule : lowerRule, reason);
    } else {
      outside = false;
      tooHigh = upper == null ? null : new Failure(upperRule, "must be " + up);
      tooLow = lower == null ? null : new Failure(lowerRule, "must be " + low);
    }
  }

  /**
   * Null when no bound is set. {@code kind} names the rules ({@code int32}, {@code duration});
   * {@code show} writes a bound in a reason.
   */
  static <T> Bounds<T> of(String kind, Comparator<T> order, T lt, T lte, T gt, T gte,
      Function<T, String> show) {
    T upper = lt != null ? lt : lte;
    T lower = gt != null ? gt : gte;
    if (upper == null && lower == null) {
      return null;
    }
    return new Bounds<>(order, upper, lt == null, kind + (lt != null ? ".lt" : ".lte"), lower,
        gt == null, kind + (gt != null ? ".gt" : ".gte"), show);
  }

  private boolean aboveUpper(T v) {
    int c = order.compare(v, upper);
    return upperInclusive ? c > 0 : c >= 0;
  }

  private boolean belowLower(T v) {
    int c = order.compare(v, lower);
    return lowerInclusive ? c < 0 : c <= 0;
  }

  Failure test(T v) {
    if (upper != null && lower != null) {
      if (outside) {
        return aboveUpper(v) && belowLower(v) ? tooHigh : null;
      }
      if (belowLower(v)) {
        return tooLow;
      }
      return aboveUpper(v) ? tooHigh : null;
    }
    if (upper != null) {
      return aboveUpper(v) ? tooHigh : null;
    }
    return belowLower(v) ? tooLow : null;
  }
}
