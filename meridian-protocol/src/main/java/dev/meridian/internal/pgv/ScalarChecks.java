package dev.meridian.internal.pgv;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import com.google.re2j.Pattern;
import io.envoyproxy.pgv.validate.Validate;
import io.envoyproxy.pgv.validate.Validate.BytesRules;
import io.envoyproxy.pgv.validate.Validate.EnumRules;
import io.envoyproxy.pgv.validate.Validate.StringRules;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * The rules of numbers, bools, strings, bytes and enums compiled into checks, each rule tested in
 * the order PGV's Go templates test them, the first failure reported.
 */
final class ScalarChecks {
  private ScalarChecks() {}

  /** Steps in order, the first failure wins; {@code skip} (ignore_empty) exempts a value. */
  record Ordered(Predicate<Object> skip, ValueCheck[] steps) implements ValueCheck {
    @Override
    public Failure test(Object value) {
      if (skip != null && skip.test(value)) {
        return null;
      }
      for (ValueCheck s : steps) {
        Failure f = s.test(value);
        if (f != null) {
          return f;
        }
      }
      return null;
    }
  }

  static ValueCheck ordered(Predicate<Object> skip, List<ValueCheck> steps) {
    if (steps.isEmpty()) {
      return null;
    }
    return skip == null && steps.size() == 1 ? steps.get(0)
        : new Ordered(skip, steps.toArray(new ValueCheck[0]));
  }

  /** A step that fails with {@code failure} unless {@code passes}. */
  static ValueCheck rule(Predicate<Object> passes, String rule, String reason) {
    Failure failure = new Failure(rule, reason);
    return v -> passes.test(v) ? null : failure;
  }

  // ---- numbers: the 12 kinds share one shape (const, lt/lte/gt/gte, in/not_in, ignore_empty) ----

  /**
   * {@code rules} is one of the 12 numeric rule messages; {@code kind} its name ({@code uint32}).
   * Values arrive boxed as protobuf-java gives them (an Integer for uint32, read unsigned).
   */
  @SuppressWarnings("unchecked")
  static ValueCheck number(String kind, Message rules) {
    Comparator<Object> order;
    Function<Object, String> show;
    boolean floating = kind.equals("float") || kind.equals("double");
    switch (kind) {
      case "uint32", "fixed32" -> {
        order = (a, b) -> Integer.compareUnsigned((Integer) a, (Integer) b);
        show = v -> Integer.toUnsignedString((Integer) v);
      }
      case "uint64", "fixed64" -> {
        order = (a, b) -> Long.compareUnsigned((Long) a, (Long) b);
        show = v -> Long.toUnsignedString((Long) v);
      }
      case "float", "double" -> {
        // as Go compares: -0 equals 0 (NaN is kept from comparisons by the steps below)
        order = (a, b) -> {
          double x = ((Number) a).doubleValue();
          double y = ((Number) b).doubleValue();
          return x < y ? -1 : x > y ? 1 : 0;
        };
        show = v -> Render.number(((Number) v).doubleValue(), kind.equals("float"));
      }
      default -> {
        order = (a, b) -> Long.compare(((Number) a).longValue(), ((Number) b).longValue());
        show = Object::toString;
      }
    }
    Predicate<Object> nan = floating ? v -> Double.isNaN(((Number) v).doubleValue()) : v -> false;
    List<ValueCheck> steps = new ArrayList<>();
    Object constant = field(rules, "const");
    if (constant != null) {
      // NaN equals nothing, itself included
      steps.add(rule(v -> !nan.test(v) && order.compare(v, constant) == 0, kind + ".const",
          "must equal " + show.apply(constant)));
    }
    Bounds<Object> bounds = Bounds.of(kind, order, field(rules, "lt"), field(rules, "lte"),
        field(rules, "gt"), field(rules, "gte"), show);
    if (bounds != null) {
      // NaN compares false with every bound, so (as in PGV's Go and C++) none refuses it
      steps.add(v -> nan.test(v) ? null : bounds.test(v));
    }
    List<Object> in = List.copyOf((List<Object>) rules.getField(
        rules.getDescriptorForType().findFieldByName("in")));
    List<Object> notIn = List.copyOf((List<Object>) rules.getField(
        rules.getDescriptorForType().findFieldByName("not_in")));
    if (!in.isEmpty()) {
      steps.add(rule(v -> !nan.test(v) && in.stream().anyMatch(x -> order.compare(v, x) == 0),
          kind + ".in", "must be one of " + list(in, show)));
    } else if (!notIn.isEmpty()) {
      steps.add(rule(v -> nan.test(v) || notIn.stream().noneMatch(x -> order.compare(v, x) == 0),
          kind + ".not_in", "must not be one of " + list(notIn, show)));
    }
    Predicate<Object> skip = Boolean.TRUE.equals(field(rules, "ignore_empty"))
        ? v -> ((Number) v).doubleValue() == 0 : null;
    return ordered(skip, steps);
  }

  /** The Java type a numeric rule kind's values have. */
  static FieldDescriptor.JavaType javaType(String kind) {
    return switch (kind) {
      case "float" -> FieldDescriptor.JavaType.FLOAT;
      case "double" -> FieldDescriptor.JavaType.DOUBLE;
      case "int32", "sint32", "sfixed32", "uint32", "fixed32" -> FieldDescriptor.JavaType.INT;
      default -> FieldDescriptor.JavaType.LONG;
    };
  }

  /** A set field of a rules message, null when unset (the rules are proto2: fields have presence). */
  private static Object field(Message rules, String name) {
    FieldDescriptor fd = rules.getDescriptorForType().findFieldByName(name);
    return fd != null && rules.hasField(fd) ? rules.getField(fd) : null;
  }

  static <T> String list(List<T> values, Function<? super T, String> show) {
    return values.stream().map(show).collect(Collectors.joining(", "));
  }

  // ---- bool ----

  static ValueCheck bool(Validate.BoolRules r) {
    if (!r.hasConst()) {
      return null;
    }
    boolean want = r.getConst();
    return rule(v -> (Boolean) v == want, "bool.const", "must be " + want);
  }

  // ---- strings ----

  /** HTTP header names (an optional leading colon, then token characters), as PGV writes it. */
  static final String HEADER_NAME = "^:?[0-9a-zA-Z!#$%&'*+-.^_|~`]+$";
  /** HTTP header values: no control characters but horizontal tab. */
  static final String HEADER_VALUE = "^[^\\x00-\\x08\\x0A-\\x1F\\x7F]*$";
  /** Either, with {@code strict: false}: only NUL, LF and CR are refused. */
  static final String HEADER_LOOSE = "^[^\\x00\\x0A\\x0D]*$";

  static ValueCheck string(StringRules r, Function<String, Pattern> patterns) {
    List<ValueCheck> steps = new ArrayList<>();
    if (r.hasConst()) {
      String c = r.getConst();
      steps.add(rule(c::equals, "string.const", "must equal " + Render.quote(c)));
    }
    if (r.getInCount() > 0) {
      Set<String> in = Set.copyOf(r.getInList());
      steps.add(rule(in::contains, "string.in",
          "must be one of " + list(r.getInList(), Render::quote)));
    } else if (r.getNotInCount() > 0) {
      Set<String> notIn = Set.copyOf(r.getNotInList());
      steps.add(rule(v -> !notIn.contains(v), "string.not_in",
          "must not be one of " + list(r.getNotInList(), Render::quote)));
    }
    lengths(steps, "string", "len", r.hasLen() ? r.getLen() : null,
        r.hasMinLen() ? r.getMinLen() : null, r.hasMaxLen() ? r.getMaxLen() : null,
        "character", v -> {
          String s = (String) v;
          return s.codePointCount(0, s.length());
        });
    lengths(steps, "string", "len_bytes", r.hasLenBytes() ? r.getLenBytes() : null,
        r.hasMinBytes() ? r.getMinBytes() : null, r.hasMaxBytes() ? r.getMaxBytes() : null,
        "byte", v -> Formats.utf8Length((String) v));
    if (r.hasPrefix()) {
      String p = r.getPrefix();
      steps.add(rule(v -> ((String) v).startsWith(p), "string.prefix",
          "must start with " + Render.quote(p)));
    }
    if (r.hasSuffix()) {
      String p = r.getSuffix();
      steps.add(rule(v -> ((String) v).endsWith(p), "string.suffix",
          "must end with " + Render.quote(p)));
    }
    if (r.hasContains()) {
      String p = r.getContains();
      steps.add(rule(v -> ((String) v).contains(p), "string.contains",
          "must contain " + Render.quote(p)));
    }
    if (r.hasNotContains()) {
      String p = r.getNotContains();
      steps.add(rule(v -> !((String) v).contains(p), "string.not_contains",
          "must not contain " + Render.quote(p)));
    }
    Pattern known = null;
    String knownReason = null;
    switch (r.getWellKnownCase()) {
      case IP -> addIf(steps, r.getIp(), v -> Formats.ip((String) v), "string.ip",
          "must be a valid IP address");
      case IPV4 -> addIf(steps, r.getIpv4(), v -> Formats.ipv4((String) v), "string.ipv4",
          "must be a valid IPv4 address");
      case IPV6 -> addIf(steps, r.getIpv6(), v -> Formats.ipv6((String) v), "string.ipv6",
          "must be a valid IPv6 address");
      case EMAIL -> addIf(steps, r.getEmail(), v -> Formats.email((String) v), "string.email",
          "must be a valid email address");
      case HOSTNAME -> addIf(steps, r.getHostname(), v -> Formats.hostname((String) v),
          "string.hostname", "must be a valid hostname");
      case ADDRESS -> addIf(steps, r.getAddress(), v -> Formats.address((String) v),
          "string.address", "must be a valid hostname or IP address");
      case URI -> addIf(steps, r.getUri(), v -> Formats.uri((String) v, true), "string.uri",
          "must be an absolute URI (with a scheme)");
      case URI_REF -> addIf(steps, r.getUriRef(), v -> Formats.uri((String) v, false),
          "string.uri_ref", "must be a valid URI reference");
      case UUID -> addIf(steps, r.getUuid(), v -> Formats.uuid((String) v), "string.uuid",
          "must be a valid UUID (8-4-4-4-12 hexadecimal digits)");
      case WELL_KNOWN_REGEX -> {
        // PGV turns these into patterns; strict (true unless set) picks the exact one
        boolean loose = r.hasStrict() && !r.getStrict();
        switch (r.getWellKnownRegex()) {
          case HTTP_HEADER_NAME -> {
            known = patterns.apply(loose ? HEADER_LOOSE : HEADER_NAME);
            knownReason = loose ? "must not contain NUL, CR or LF characters"
                : "must be a valid HTTP header name";
          }
          case HTTP_HEADER_VALUE -> {
            known = patterns.apply(loose ? HEADER_LOOSE : HEADER_VALUE);
            knownReason = loose ? "must not contain NUL, CR or LF characters"
                : "must be a valid HTTP header value (no control characters but tab)";
          }
          default -> { }
        }
      }
      default -> { }
    }
    if (known != null) {
      Pattern p = known;
      steps.add(rule(v -> p.matches((String) v), "string.well_known_regex", knownReason));
    } else if (r.hasPattern()) {
      // Envoy's C++ (RE2::FullMatch) and PGV's Java match the whole value
      Pattern p = patterns.apply(r.getPattern());
      steps.add(rule(v -> p.matches((String) v), "string.pattern",
          "must match the pattern " + Render.quote(r.getPattern())));
    }
    Predicate<Object> skip = r.getIgnoreEmpty() ? v -> ((String) v).isEmpty() : null;
    return ordered(skip, steps);
  }

  private static void addIf(List<ValueCheck> steps, boolean on, Predicate<Object> passes,
      String rule, String reason) {
    if (on) {
      steps.add(rule(passes, rule, reason));
    }
  }

  /**
   * A length rule, as PGV's templates check it: an exact length ({@code len}, or equal minimum
   * and maximum), a range, a minimum or a maximum.
   */
  private static void lengths(List<ValueCheck> steps, String kind, String exactRule, Long exact,
      Long min, Long max, String unit, java.util.function.ToLongFunction<Object> measure) {
    String minRule = kind + (exactRule.equals("len_bytes") ? ".min_bytes" : ".min_len");
    String maxRule = kind + (exactRule.equals("len_bytes") ? ".max_bytes" : ".max_len");
    String what = kind.equals("string") && unit.equals("byte") ? " long in UTF-8" : " long";
    if (exact != null || min != null && min.equals(max)) {
      long n = exact != null ? exact : min;
      steps.add(rule(v -> measure.applyAsLong(v) == n,
          exact != null ? kind + "." + exactRule : minRule,
          "must be exactly " + Render.count(n, unit) + what));
      return;
    }
    if (min != null && max != null) {
      long lo = min;
      long hi = max;
      String reason = "must be between " + lo + " and " + Render.count(hi, unit) + what;
      Failure low = new Failure(minRule, reason);
      Failure high = new Failure(maxRule, reason);
      steps.add(v -> {
        long l = measure.applyAsLong(v);
        return l < lo ? low : l > hi ? high : null;
      });
    } else if (min != null) {
      long lo = min;
      steps.add(rule(v -> measure.applyAsLong(v) >= lo, minRule,
          "must be at least " + Render.count(lo, unit) + what));
    } else if (max != null) {
      long hi = max;
      steps.add(rule(v -> measure.applyAsLong(v) <= hi, maxRule,
          "must be at most " + Render.count(hi, unit) + what));
    }
  }

  // ---- bytes ----

  static ValueCheck bytes(BytesRules r, Function<String, Pattern> patterns) {
    List<ValueCheck> steps = new ArrayList<>();
    lengths(steps, "bytes", "len", r.hasLen() ? r.getLen() : null,
        r.hasMinLen() ? r.getMinLen() : null, r.hasMaxLen() ? r.getMaxLen() : null, "byte",
        v -> ((ByteString) v).size());
    if (r.hasPrefix()) {
      ByteString p = r.getPrefix();
      steps.add(rule(v -> ((ByteString) v).startsWith(p), "bytes.prefix",
          "must start with " + Render.quote(p)));
    }
    if (r.hasSuffix()) {
      ByteString p = r.getSuffix();
      steps.add(rule(v -> ((ByteString) v).endsWith(p), "bytes.suffix",
          "must end with " + Render.quote(p)));
    }
    if (r.hasContains()) {
      ByteString p = r.getContains();
      steps.add(rule(v -> indexOf((ByteString) v, p) >= 0, "bytes.contains",
          "must contain " + Render.quote(p)));
    }
    if (r.getInCount() > 0) {
      Set<ByteString> in = Set.copyOf(r.getInList());
      steps.add(rule(in::contains, "bytes.in",
          "must be one of " + list(r.getInList(), Render::quote)));
    } else if (r.getNotInCount() > 0) {
      Set<ByteString> notIn = Set.copyOf(r.getNotInList());
      steps.add(rule(v -> !notIn.contains(v), "bytes.not_in",
          "must not be one of " + list(r.getNotInList(), Render::quote)));
    }
    if (r.hasConst()) {
      ByteString c = r.getConst();
      steps.add(rule(c::equals, "bytes.const", "must equal " + Render.quote(c)));
    }
    switch (r.getWellKnownCase()) {
      case IP -> addIf(steps, r.getIp(), v -> Formats.ip((ByteString) v), "bytes.ip",
          "must be an IP address (4 or 16 bytes)");
      case IPV4 -> addIf(steps, r.getIpv4(), v -> Formats.ipv4((ByteString) v), "bytes.ipv4",
          "must be an IPv4 address (4 bytes)");
      case IPV6 -> addIf(steps, r.getIpv6(), v -> Formats.ipv6((ByteString) v), "bytes.ipv6",
          "must be an IPv6 address (16 bytes)");
      default -> { }
    }
    if (r.hasPattern()) {
      // matched against the bytes read as UTF-8, as PGV's Java does
      Pattern p = patterns.apply(r.getPattern());
      steps.add(rule(v -> p.matches(((ByteString) v).toStringUtf8()), "bytes.pattern",
          "must match the pattern " + Render.quote(r.getPattern())));
    }
    Predicate<Object> skip = r.getIgnoreEmpty() ? v -> ((ByteString) v).isEmpty() : null;
    return ordered(skip, steps);
  }

  private static int indexOf(ByteString s, ByteString part) {
    int n = part.size();
    outer:
    for (int i = 0; i + n <= s.size(); i++) {
      for (int j = 0; j < n; j++) {
        if (s.byteAt(i + j) != part.byteAt(j)) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  // ---- enums ----

  static ValueCheck enumeration(EnumRules r, EnumDescriptor type) {
    List<ValueCheck> steps = new ArrayList<>();
    Function<Integer, String> show = n -> {
      EnumValueDescriptor d = type.findValueByNumber(n);
      return d != null ? d.getName() : Integer.toString(n);
    };
    if (r.hasConst()) {
      int c = r.getConst();
      steps.add(rule(v -> number(v) == c, "enum.const", "must be " + show.apply(c)));
    }
    if (r.getInCount() > 0) {
      Set<Integer> in = Set.copyOf(r.getInList());
      steps.add(rule(v -> in.contains(number(v)), "enum.in",
          "must be one of " + list(r.getInList(), show)));
    } else if (r.getNotInCount() > 0) {
      Set<Integer> notIn = Set.copyOf(r.getNotInList());
      steps.add(rule(v -> !notIn.contains(number(v)), "enum.not_in",
          "must not be one of " + list(r.getNotInList(), show)));
    }
    if (r.getDefinedOnly()) {
      steps.add(rule(v -> type.findValueByNumber(number(v)) != null, "enum.defined_only",
          "must be one of the values " + type.getName() + " defines"));
    }
    return ordered(null, steps);
  }

  private static int number(Object v) {
    return v instanceof EnumValueDescriptor d ? d.getNumber() : (Integer) v;
  }
}
