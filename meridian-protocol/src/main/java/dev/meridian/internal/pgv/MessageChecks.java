package dev.meridian.internal.pgv;

import com.google.protobuf.MessageOrBuilder;
import io.envoyproxy.pgv.validate.Validate.AnyRules;
import io.envoyproxy.pgv.validate.Validate.DurationRules;
import io.envoyproxy.pgv.validate.Validate.TimestampRules;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The rules of {@code Duration}, {@code Timestamp} and {@code Any} values (their {@code required}
 * is the field's, checked where the field is). Values are messages, generated or dynamic.
 */
final class MessageChecks {
  private MessageChecks() {}

  static ValueCheck duration(DurationRules r) {
    List<ValueCheck> steps = new ArrayList<>();
    if (r.hasConst()) {
      Times.Pair c = Times.of(r.getConst());
      steps.add(ScalarChecks.rule(v -> Times.ORDER.compare(pair(v), c) == 0, "duration.const",
          "must equal " + Times.showDuration(c)));
    }
    Bounds<Times.Pair> bounds = Bounds.of("duration", Times.ORDER,
        r.hasLt() ? Times.of(r.getLt()) : null, r.hasLte() ? Times.of(r.getLte()) : null,
        r.hasGt() ? Times.of(r.getGt()) : null, r.hasGte() ? Times.of(r.getGte()) : null,
        Times::showDuration);
    if (bounds != null) {
      steps.add(v -> bounds.test(pair(v)));
    }
    if (r.getInCount() > 0) {
      Set<Times.Pair> in = Set.copyOf(r.getInList().stream().map(Times::of).toList());
      steps.add(ScalarChecks.rule(v -> in.contains(pair(v)), "duration.in", "must be one of "
          + ScalarChecks.list(r.getInList(), d -> Times.showDuration(Times.of(d)))));
    } else if (r.getNotInCount() > 0) {
      Set<Times.Pair> notIn = Set.copyOf(r.getNotInList().stream().map(Times::of).toList());
      steps.add(ScalarChecks.rule(v -> !notIn.contains(pair(v)), "duration.not_in",
          "must not be one of "
              + ScalarChecks.list(r.getNotInList(), d -> Times.showDuration(Times.of(d)))));
    }
    if (steps.isEmpty()) {
      return null;
    }
    // as in PGV, a value out of protobuf's range fails before any comparison
    steps.add(0, ScalarChecks.rule(v -> Times.validDuration(pair(v)), "duration.valid",
        "must be a valid duration (at most 10000 years, seconds and nanos of one sign)"));
    return ScalarChecks.ordered(null, steps);
  }

  static ValueCheck timestamp(TimestampRules r, Clock clock) {
    List<ValueCheck> steps = new ArrayList<>();
    if (r.hasConst()) {
      Times.Pair c = Times.of(r.getConst());
      steps.add(ScalarChecks.rule(v -> Times.ORDER.compare(pair(v), c) == 0, "timestamp.const",
          "must equal " + Times.showTimestamp(c)));
    }
    Bounds<Times.Pair> bounds = Bounds.of("timestamp", Times.ORDER,
        r.hasLt() ? Times.of(r.getLt()) : null, r.hasLte() ? Times.of(r.getLte()) : null,
        r.hasGt() ? Times.of(r.getGt()) : null, r.hasGte() ? Times.of(r.getGte()) : null,
        Times::showTimestamp);
    java.time.Duration within = r.hasWithin()
        ? java.time.Duration.ofSeconds(r.getWithin().getSeconds(), r.getWithin().getNanos())
        : null;
    String w = r.hasWithin() ? Times.showDuration(Times.of(r.getWithin())) : null;
    if (bounds != null) {
      steps.add(v -> bounds.test(pair(v)));
    } else if (r.getLtNow()) {
      if (within != null) {
        Failure f = new Failure("timestamp.lt_now", "must be in the past, within " + w + " of now");
        steps.add(v -> {
          Instant now = clock.instant();
          Instant t = instant(v);
          return t.compareTo(now) >= 0 || t.compareTo(now.minus(within)) < 0 ? f : null;
        });
      } else {
        Failure f = new Failure("timestamp.lt_now", "must be in the past");
        steps.add(v -> instant(v).compareTo(clock.instant()) >= 0 ? f : null);
      }
    } else if (r.getGtNow()) {
      if (within != null) {
        Failure f = new Failure("timestamp.gt_now",
            "must be in the future, within " + w + " of now");
        steps.add(v -> {
          Instant now = clock.instant();
          Instant t = instant(v);
          return t.compareTo(now) <= 0 || t.compareTo(now.plus(within)) > 0 ? f : null;
        });
      } else {
        Failure f = new Failure("timestamp.gt_now", "must be in the future");
        steps.add(v -> instant(v).compareTo(clock.instant()) <= 0 ? f : null);
      }
    } else if (within != null) {
      Failure f = new Failure("timestamp.within", "must be within " + w + " of now");
      steps.add(v -> {
        Instant now = clock.instant();
        Instant t = instant(v);
        return t.compareTo(now.plus(within)) >= 0 || t.compareTo(now.minus(within)) <= 0
            ? f : null;
      });
    }
    if (steps.isEmpty()) {
      return null;
    }
    steps.add(0, ScalarChecks.rule(v -> Times.validTimestamp(pair(v)), "timestamp.valid",
        "must be a valid timestamp (years 1 to 9999, nanos from 0 to 999999999)"));
    return ScalarChecks.ordered(null, steps);
  }

  static ValueCheck any(AnyRules r) {
    if (r.getInCount() > 0) {
      Set<String> in = Set.copyOf(r.getInList());
      return ScalarChecks.rule(v -> in.contains(typeUrl(v)), "any.in",
          "must hold one of the types " + ScalarChecks.list(r.getInList(), Render::quote));
    }
    if (r.getNotInCount() > 0) {
      Set<String> notIn = Set.copyOf(r.getNotInList());
      return ScalarChecks.rule(v -> !notIn.contains(typeUrl(v)), "any.not_in",
          "must not hold any of the types "
              + ScalarChecks.list(r.getNotInList(), Render::quote));
    }
    return null;
  }

  static String typeUrl(Object any) {
    if (any instanceof com.google.protobuf.Any a) {
      return a.getTypeUrl();
    }
    MessageOrBuilder m = (MessageOrBuilder) any;
    // type_url is Any's first field, value its second
    return (String) m.getField(m.getDescriptorForType().getFields().get(0));
  }

  private static Times.Pair pair(Object v) {
    return Times.of((MessageOrBuilder) v);
  }

  private static Instant instant(Object v) {
    MessageOrBuilder m = (MessageOrBuilder) v;
    return Instant.ofEpochSecond(Times.secondsOf(m), Times.nanosOf(m));
  }
}
