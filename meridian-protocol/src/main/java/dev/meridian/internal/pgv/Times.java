package dev.meridian.internal.pgv;

import com.google.protobuf.Duration;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.Timestamp;
import java.util.Comparator;

/** Durations and timestamps, generated or dynamic, as (seconds, nanos) pairs. */
final class Times {
  /** Proto's limits: ten thousand years either way for a duration; years 1 to 9999 for a time. */
  static final long MAX_DURATION_SECONDS = 315_576_000_000L;
  static final long MIN_TIMESTAMP_SECONDS = -62_135_596_800L;
  static final long MAX_TIMESTAMP_SECONDS = 253_402_300_799L;

  /** Lexicographic: right for valid durations (seconds and nanos share a sign) and timestamps. */
  static final Comparator<Pair> ORDER = (a, b) -> a.seconds() != b.seconds()
      ? Long.compare(a.seconds(), b.seconds()) : Integer.compare(a.nanos(), b.nanos());

  private Times() {}

  /** A duration or timestamp value. */
  record Pair(long seconds, int nanos) {}

  static Pair of(MessageOrBuilder m) {
    return new Pair(secondsOf(m), nanosOf(m));
  }

  static Pair of(Duration d) {
    return new Pair(d.getSeconds(), d.getNanos());
  }

  static Pair of(Timestamp t) {
    return new Pair(t.getSeconds(), t.getNanos());
  }

  static long secondsOf(MessageOrBuilder m) {
    if (m instanceof Duration d) {
      return d.getSeconds();
    }
    if (m instanceof Timestamp t) {
      return t.getSeconds();
    }
    // seconds and nanos are the first and second fields of both types
    return (Long) m.getField(m.getDescriptorForType().getFields().get(0));
  }

  static int nanosOf(MessageOrBuilder m) {
    if (m instanceof Duration d) {
      return d.getNanos();
    }
    if (m instanceof Timestamp t) {
      return t.getNanos();
    }
    return (Integer) m.getField(m.getDescriptorForType().getFields().get(1));
  }

  static boolean validDuration(Pair p) {
    long s = p.seconds();
    int n = p.nanos();
    return s >= -MAX_DURATION_SECONDS && s <= MAX_DURATION_SECONDS && n > -1_000_000_000
        && n < 1_000_000_000 && !(s > 0 && n < 0) && !(s < 0 && n > 0);
  }

  static boolean validTimestamp(Pair p) {
    return p.seconds() >= MIN_TIMESTAMP_SECONDS && p.seconds() <= MAX_TIMESTAMP_SECONDS
        && p.nanos() >= 0 && p.nanos() < 1_000_000_000;
  }

  static String showDuration(Pair p) {
    return Render.duration(p.seconds(), p.nanos());
  }

  static String showTimestamp(Pair p) {
    return Render.timestamp(p.seconds(), p.nanos());
  }
}
