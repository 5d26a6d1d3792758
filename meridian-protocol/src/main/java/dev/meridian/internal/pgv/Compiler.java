package dev.meridian.internal.pgv;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.MessageOrBuilder;
import com.google.re2j.Pattern;
import io.envoyproxy.pgv.validate.Validate.FieldRules;
import io.envoyproxy.pgv.validate.Validate.MapRules;
import io.envoyproxy.pgv.validate.Validate.RepeatedRules;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Reads a message type's rules and compiles them, field by field, into {@link Spec}s: the checks
 * of the field and the message type to walk into. Which of those walks is worth taking is known
 * only once every type reachable is read, so a spec becomes a plan later ({@link Spec#plan}).
 */
final class Compiler {
  private final RuleSource source;
  private final Function<String, Pattern> patterns;
  private final Clock clock;

  Compiler(RuleSource source, Function<String, Pattern> patterns, Clock clock) {
    this.source = source;
    this.patterns = patterns;
    this.clock = clock;
  }

  /** What a message type's own options say: off, or its fields' specs in field order. */
  record Shape(boolean off, List<Spec> specs) {
    boolean ownRules() {
      return !off && specs.stream().anyMatch(Spec::ownRules);
    }

    List<Descriptor> children() {
      List<Descriptor> out = new ArrayList<>();
      if (!off) {
        for (Spec s : specs) {
          if (s.child() != null) {
            out.add(s.child());
          }
        }
      }
      return out;
    }
  }

  enum Kind { SINGLE, LIST, MAP, ONEOF }

  /** The compiled rules of one field (or of one required oneof). */
  record Spec(Kind kind, FieldDescriptor fd, boolean guard, Failure required, ValueCheck check,
      Function<Object, String> render, Descriptor child, boolean ignoreEmpty, ValueCheck count,
      boolean unique, ValueCheck key, OneofDescriptor oneof, Failure oneofFailure) {
    boolean ownRules() {
      return check != null || required != null || count != null || unique || key != null
          || oneof != null;
    }

    /** The plan; null when there is nothing to check and nothing worth walking into. */
    Plans.FieldPlan plan(Predicate<Descriptor> reachable) {
      boolean walk = child != null && reachable.test(child);
      if (!walk && !ownRules()) {
        return null;
      }
      Plans.Element e = new Plans.Element(check, render, walk);
      return switch (kind) {
        case SINGLE -> new Plans.Single(fd, new Step.Field(fd.getName()),
            fd.getJavaType() == FieldDescriptor.JavaType.MESSAGE, guard, required, e);
        case LIST -> new Plans.Repeated(fd, new Step.Field(fd.getName()), ignoreEmpty, count,
            unique, e);
        case MAP -> {
          Descriptor entry = fd.getMessageType();
          yield new Plans.MapPlan(fd, new Step.Field(fd.getName()), ignoreEmpty, count,
              entry.findFieldByNumber(1), key, entry.findFieldByNumber(2), e);
        }
        case ONEOF -> new Plans.OneofRequired(oneof, new Step.Field(oneof.getName()),
            oneofFailure);
      };
    }
  }

  Shape shape(Descriptor d) {
    if (source.off(d)) {
      return new Shape(true, List.of());
    }
    List<Spec> specs = new ArrayList<>();
    Set<OneofDescriptor> placed = new HashSet<>();
    for (FieldDescriptor fd : d.getFields()) {
      OneofDescriptor o = fd.getRealContainingOneof();
      if (o != null && placed.add(o) && source.required(o)) {
        // the oneof's own check stands where its first field does
        specs.add(oneofRequired(o));
      }
      Spec s = field(fd, source.rules(fd));
      if (s != null) {
        specs.add(s);
      }
    }
    return new Shape(false, List.copyOf(specs));
  }

  private static Spec oneofRequired(OneofDescriptor o) {
    List<String> names = o.getFields().stream().map(FieldDescriptor::getName).toList();
    String reason = names.size() == 1 ? "is required: set " + names.get(0)
        : "is required: set one of " + String.join(", ", names);
    return new Spec(Kind.ONEOF, null, false, null, null, null, null, false, null, false, null, o,
        new Failure("oneof.required", reason));
  }

  private Spec field(FieldDescriptor fd, FieldRules r) {
    FieldRules rules = r == null ? FieldRules.getDefaultInstance() : r;
    if (fd.isMapField()) {
      MapRules m = rules.getTypeCase() == FieldRules.TypeCase.MAP ? rules.getMap()
          : MapRules.getDefaultInstance();
      Descriptor entry = fd.getMessageType();
      Value key = value(entry.findFieldByNumber(1), m.getKeys());
      Value value = value(entry.findFieldByNumber(2), m.getValues());
      ValueCheck count = counts("map", "min_pairs", "max_pairs", "entry",
          m.getMinPairs(), m.hasMaxPairs() ? m.getMaxPairs() : null);
      return new Spec(Kind.MAP, fd, false, null, value.check, value.render, value.child,
          m.getIgnoreEmpty(), count, false, key.check, null, null);
    }
    if (fd.isRepeated()) {
      RepeatedRules rep = rules.getTypeCase() == FieldRules.TypeCase.REPEATED
          ? rules.getRepeated() : RepeatedRules.getDefaultInstance();
      Value item = value(fd, rep.getItems());
      ValueCheck count = counts("repeated", "min_items", "max_items", "item",
          rep.getMinItems(), rep.hasMaxItems() ? rep.getMaxItems() : null);
      return new Spec(Kind.LIST, fd, false, null, item.check, item.render, item.child,
          rep.getIgnoreEmpty(), count, rep.getUnique(), null, null, null);
    }
    Value v = value(fd, rules);
    // proto3 optional and oneof members are checked only when set
    boolean guard = fd.getContainingOneof() != null;
    return new Spec(Kind.SINGLE, fd, guard, v.required, v.check, v.render, v.child, false,
        null, false, null, null, null);
  }

  /** The compiled rules of one value of {@code fd}'s (element) type. */
  private record Value(ValueCheck check, Function<Object, String> render, Descriptor child,
      Failure required) {}

  private static final Failure MESSAGE_REQUIRED = new Failure("message.required", "is required");

  private Value value(FieldDescriptor fd, FieldRules r) {
    boolean message = fd.getJavaType() == FieldDescriptor.JavaType.MESSAGE;
    Descriptor type = message ? fd.getMessageType() : null;
    boolean wrapper = message && Wrappers.isWrapper(type);
    // a wrapper carries the rules of the scalar it wraps, read from its value field
    FieldDescriptor scalar = wrapper ? type.findFieldByNumber(1) : fd;
    Function<Object, String> render = v -> Render.clip(Render.element(fd, v));
    ValueCheck check = null;
    Failure required = null;
    switch (r.getTypeCase()) {
      case FLOAT, DOUBLE, INT32, INT64, UINT32, UINT64, SINT32, SINT64, FIXED32, FIXED64,
          SFIXED32, SFIXED64 -> {
        String kind = r.getTypeCase().name().toLowerCase(java.util.Locale.ROOT);
        Message numeric = (Message) r.getField(
            r.getDescriptorForType().findFieldByNumber(r.getTypeCase().getNumber()));
        if (scalar.getJavaType() == ScalarChecks.javaType(kind)) {
          check = ScalarChecks.number(kind, numeric);
        }
      }
      case BOOL -> {
        if (scalar.getJavaType() == FieldDescriptor.JavaType.BOOLEAN) {
          check = ScalarChecks.bool(r.getBool());
        }
      }
      case STRING -> {
        if (scalar.getJavaType() == FieldDescriptor.JavaType.STRING) {
          check = ScalarChecks.string(r.getString(), patterns);
        }
      }
      case BYTES -> {
        if (scalar.getJavaType() == FieldDescriptor.JavaType.BYTE_STRING) {
          check = ScalarChecks.bytes(r.getBytes(), patterns);
        }
      }
      case ENUM -> {
        if (fd.getJavaType() == FieldDescriptor.JavaType.ENUM) {
          check = ScalarChecks.enumeration(r.getEnum(), fd.getEnumType());
        }
      }
      case DURATION -> {
        if (is(type, "google.protobuf.Duration")) {
          check = MessageChecks.duration(r.getDuration());
          required = r.getDuration().getRequired()
              ? new Failure("duration.required", "is required") : null;
        }
      }
      case TIMESTAMP -> {
        if (is(type, "google.protobuf.Timestamp")) {
          check = MessageChecks.timestamp(r.getTimestamp(), clock);
          required = r.getTimestamp().getRequired()
              ? new Failure("timestamp.required", "is required") : null;
        }
      }
      case ANY -> {
        if (is(type, "google.protobuf.Any")) {
          check = MessageChecks.any(r.getAny());
          required = r.getAny().getRequired() ? new Failure("any.required", "is required") : null;
        }
      }
      default -> {
        // no typed rules: a message field's own message rules (required, skip) apply
        if (message && r.getMessage().getRequired()) {
          required = MESSAGE_REQUIRED;
        }
      }
    }
    if (wrapper && scalar != fd) {
      if (check != null) {
        ValueCheck inner = check;
        check = v -> inner.test(((MessageOrBuilder) v).getField(scalar));
      }
      if (r.getMessage().getRequired()) {
        required = MESSAGE_REQUIRED;
      }
    }
    if (is(type, "google.protobuf.Any")) {
      render = v -> Render.clip(Render.jsonQuote(MessageChecks.typeUrl(v)));
    }
    boolean skip = r.getMessage().getSkip();
    Descriptor child = message && !skip ? type : null;
    return new Value(check, render, child, required);
  }

  private static boolean is(Descriptor type, String name) {
    return type != null && type.getFullName().equals(name);
  }

  /**
   * Count rules as PGV's templates read them: a minimum of 0 is no minimum; a maximum is one when
   * set, 0 included; an equal minimum and maximum is an exact count.
   */
  private static ValueCheck counts(String kind, String minRule, String maxRule, String noun,
      long min, Long max) {
    String lo = kind + "." + minRule;
    String hi = kind + "." + maxRule;
    if (min > 0) {
      if (max != null && max == min) {
        String reason = "must have exactly " + Render.count(min, noun);
        Failure few = new Failure(lo, reason);
        Failure many = new Failure(hi, reason);
        return n -> (Integer) n < min ? few : (Integer) n > min ? many : null;
      }
      if (max != null) {
        long top = max;
        String reason = "must have between " + min + " and " + Render.count(top, noun);
        Failure few = new Failure(lo, reason);
        Failure many = new Failure(hi, reason);
        return n -> (Integer) n < min ? few : (Integer) n > top ? many : null;
      }
      Failure few = new Failure(lo, "must have at least " + Render.count(min, noun));
      return n -> (Integer) n < min ? few : null;
    }
    if (max != null) {
      long top = max;
      Failure many = new Failure(hi, top == 0 ? "must be empty"
          : "must have at most " + Render.count(top, noun));
      return n -> (Integer) n > top ? many : null;
    }
    return null;
  }
}
