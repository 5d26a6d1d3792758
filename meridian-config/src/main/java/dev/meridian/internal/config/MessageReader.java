package dev.meridian.internal.config;

import com.google.protobuf.Any;
import com.google.protobuf.BoolValue;
import com.google.protobuf.ByteString;
import com.google.protobuf.BytesValue;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DoubleValue;
import com.google.protobuf.Duration;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.FieldMask;
import com.google.protobuf.FloatValue;
import com.google.protobuf.Int32Value;
import com.google.protobuf.Int64Value;
import com.google.protobuf.ListValue;
import com.google.protobuf.Message;
import com.google.protobuf.NullValue;
import com.google.protobuf.StringValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Timestamp;
import com.google.protobuf.UInt32Value;
import com.google.protobuf.UInt64Value;
import com.google.protobuf.Value;
import com.google.protobuf.util.Durations;
import com.google.protobuf.util.FieldMaskUtil;
import com.google.protobuf.util.Timestamps;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a {@link ConfigNode} tree into a proto message by walking the message's descriptor
 * alongside it, as proto3 JSON (protobuf's {@code JsonFormat}) reads a JSON tree: the same field
 * names (snake_case and lowerCamelCase), well-known types, {@code Any} through the type registry,
 * null meaning "not set". What it adds (issue 18):
 *
 * <ul>
 *   <li>Each scalar is read by the type of the field it goes into. A YAML plain scalar into a
 *       string field is its text as written ({@code yes}, {@code 0777}, {@code 1e3}, {@code ~},
 *       {@code 2026-01-01}); into a number, bool or enum field it must be what proto3 JSON accepts
 *       there. Only google.protobuf.Value, which has no one type, takes YAML 1.2's core schema.
 *   <li>Every problem is collected with the line and column of the offending key or value and its
 *       path in the resource, and an unknown field or enum value gets the closest known name.
 * </ul>
 */
final class MessageReader {
  /** A problem at a line and column (1-based), at a path such as {@code filter_chains[0].name}. */
  record Problem(int line, int column, String path, String message) {}

  /** As JsonFormat's default recursion limit. */
  private static final int MAX_DEPTH = 100;
  /** A value that was reported as a problem: set nothing. */
  private static final Object INVALID = new Object();
  private static final Set<String> WRAPPERS = Set.of(
      BoolValue.getDescriptor().getFullName(), Int32Value.getDescriptor().getFullName(),
      UInt32Value.getDescriptor().getFullName(), Int64Value.getDescriptor().getFullName(),
      UInt64Value.getDescriptor().getFullName(), StringValue.getDescriptor().getFullName(),
      BytesValue.getDescriptor().getFullName(), FloatValue.getDescriptor().getFullName(),
      DoubleValue.getDescriptor().getFullName());
  private static final String ANY = Any.getDescriptor().getFullName();
  private static final String DURATION = Duration.getDescriptor().getFullName();
  private static final String TIMESTAMP = Timestamp.getDescriptor().getFullName();
  private static final String FIELD_MASK = FieldMask.getDescriptor().getFullName();
  private static final String STRUCT = Struct.getDescriptor().getFullName();
  private static final String LIST_VALUE = ListValue.getDescriptor().getFullName();
  private static final String VALUE = Value.getDescriptor().getFullName();
  private static final String STRING_VALUE = StringValue.getDescriptor().getFullName();
  private static final String NULL_VALUE = NullValue.getDescriptor().getFullName();

  private final MessageTypes registry;
  private final List<Problem> problems = new ArrayList<>();

  MessageReader(MessageTypes registry) {
    this.registry = registry;
  }

  List<Problem> problems() {
    return problems;
  }

  /**
   * Reads the entries of {@code map} into {@code builder} as its fields, leaving out the keys in
   * {@code skip} (a resource's {@code @type}); {@code path} prefixes the paths of problems.
   */
  void read(ConfigNode map, Message.Builder builder, Set<String> skip, String path) {
    fields(map, builder, skip, path.isEmpty() ? Where.ROOT : Where.ROOT.field(path), 0);
  }

  private void fields(ConfigNode map, Message.Builder b, Set<String> skip, Where where, int depth) {
    Descriptor type = b.getDescriptorForType();
    if (!expect(map, ConfigNode.Kind.MAP, "a mapping (" + type.getFullName() + ")", where)) {
      return;
    }
    Map<String, FieldDescriptor> byName = registry.fieldNames(type);
    List<ConfigNode.Entry> entries = map.entries();
    FieldDescriptor[] set = new FieldDescriptor[entries.size()];
    next:
    for (int i = 0; i < entries.size(); i++) {
      ConfigNode.Entry e = entries.get(i);
      String key = e.key();
      if (key == null) {
        problem(e, where, "a key must be a scalar");
        continue;
      }
      for (int j = 0; j < i; j++) {
        ConfigNode.Entry earlier = entries.get(j);
        if (key.equals(earlier.key())) {
          problem(e, where, "duplicate key `" + key + "` (first at " + at(earlier) + ")");
          continue next;
        }
      }
      if (skip.contains(key)) {
        continue;
      }
      FieldDescriptor fd = byName.get(key);
      if (fd == null) {
        problem(e, where, "unknown field `" + key + "` in " + type.getFullName()
            + didYouMeanField(key, type));
        continue;
      }
      // proto3 JSON: a field is given once (not as both connect_timeout and connectTimeout), and
      // one field of a oneof at most.
      for (int j = 0; j < i; j++) {
        FieldDescriptor other = set[j];
        if (other == null) {
          continue;
        }
        ConfigNode.Entry earlier = entries.get(j);
        if (other == fd) {
          problem(e, where, "`" + key + "` sets field `" + fd.getName() + "` again (set as `"
              + earlier.key() + "` at " + at(earlier) + ")");
          continue next;
        }
        if (fd.getContainingOneof() != null && fd.getContainingOneof() == other.getContainingOneof()) {
          problem(e, where, "`" + key + "` and `" + earlier.key() + "` (at " + at(earlier)
              + ") are alternatives (oneof `" + fd.getContainingOneof().getName()
              + "`): set only one");
          continue next;
        }
      }
      set[i] = fd;
      field(fd, e.value(), b, where.field(key), depth);
    }
  }

  private void field(FieldDescriptor fd, ConfigNode node, Message.Builder b, Where where,
      int depth) {
    if (unsupported(node, where)) {
      return;
    }
    if (fd.isMapField()) {
      if (node.kind() != ConfigNode.Kind.NULL) {
        map(fd, node, b, where, depth);
      }
      return;
    }
    if (fd.isRepeated()) {
      if (node.kind() == ConfigNode.Kind.NULL
          || !expect(node, ConfigNode.Kind.SEQ, "a list", where)) {
        return;
      }
      List<ConfigNode> items = node.items();
      for (int i = 0; i < items.size(); i++) {
        ConfigNode item = items.get(i);
        Object v = value(fd, item, b, where.index(i), depth);
        if (v == null) {
          problem(item, where.index(i), "a list element cannot be null");
        } else if (v != INVALID) {
          b.addRepeatedField(fd, v);
        }
      }
      return;
    }
    Object v = value(fd, node, b, where, depth);
    if (v != null && v != INVALID) {
      b.setField(fd, v);
    }
  }

  private void map(FieldDescriptor fd, ConfigNode node, Message.Builder b, Where where,
      int depth) {
    if (!expect(node, ConfigNode.Kind.MAP, "a mapping", where)) {
      return;
    }
    Descriptor entryType = fd.getMessageType();
    FieldDescriptor keyField = entryType.findFieldByName("key");
    FieldDescriptor valueField = entryType.findFieldByName("value");
    List<ConfigNode.Entry> entries = node.entries();
    Map<String, ConfigNode.Entry> seen = new HashMap<>();
    for (ConfigNode.Entry e : entries) {
      if (e.key() == null) {
        problem(e, where, "a key must be a scalar");
        continue;
      }
      ConfigNode.Entry earlier = seen.putIfAbsent(e.key(), e);
      if (earlier != null) {
        problem(e, where, "duplicate key `" + e.key() + "` (first at " + at(earlier) + ")");
        continue;
      }
      Where at = where.key(e.key());
      Message.Builder entry = b.newBuilderForField(fd);
      Object key;
      try {
        key = keyField.getType() == FieldDescriptor.Type.STRING ? e.key()
            : scalar(keyField, e.key());
      } catch (BadScalar x) {
        problem(e, where, "map key: " + x.getMessage());
        continue;
      }
      Object v = value(valueField, e.value(), entry, at, depth);
      if (v == INVALID) {
        continue;
      }
      if (v == null) {
        problem(e.value(), at, "a map value cannot be null");
        continue;
      }
      entry.setField(keyField, key);
      entry.setField(valueField, v);
      b.addRepeatedField(fd, entry.build());
    }
  }

  /** The value of one field (or list element): null for "not set", {@link #INVALID} if reported. */
  private Object value(FieldDescriptor fd, ConfigNode node, Message.Builder b, Where where,
      int depth) {
    if (unsupported(node, where)) {
      return INVALID;
    }
    boolean message = fd.getJavaType() == FieldDescriptor.JavaType.MESSAGE;
    boolean stringTarget = fd.getType() == FieldDescriptor.Type.STRING
        || message && fd.getMessageType().getFullName().equals(STRING_VALUE);
    if (isNull(node, stringTarget)) {
      if (message && fd.getMessageType().getFullName().equals(VALUE)) {
        Value v = Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build();
        return merge(b.newBuilderForField(fd), v).build();
      }
      if (fd.getJavaType() == FieldDescriptor.JavaType.ENUM
          && fd.getEnumType().getFullName().equals(NULL_VALUE)) {
        return fd.getEnumType().findValueByNumber(0);
      }
      return null;
    }
    if (message) {
      if (depth >= MAX_DEPTH) {
        problem(node, where, "nested deeper than " + MAX_DEPTH + " messages");
        return INVALID;
      }
      Message.Builder sub = b.newBuilderForField(fd);
      int before = problems.size();
      message(node, sub, where, depth + 1);
      return problems.size() == before ? sub.build() : INVALID;
    }
    if (node.kind() != ConfigNode.Kind.SCALAR && node.kind() != ConfigNode.Kind.NULL) {
      problem(node, where, "expected " + expected(fd) + ", got " + describe(node));
      return INVALID;
    }
    if (fd.getType() == FieldDescriptor.Type.STRING) {
      return node.scalar();
    }
    try {
      return scalar(fd, node.scalar());
    } catch (BadScalar x) {
      problem(node, where, x.getMessage());
      return INVALID;
    }
  }

  /** A message-typed value: the well-known types have their own JSON forms. */
  private void message(ConfigNode node, Message.Builder b, Where where, int depth) {
    Descriptor type = b.getDescriptorForType();
    String name = type.getFullName();
    if (name.equals(ANY)) {
      any(node, b, where, depth);
    } else if (WRAPPERS.contains(name)) {
      FieldDescriptor vf = type.findFieldByName("value");
      Object v = value(vf, node, b, where, depth);
      if (v != null && v != INVALID) {
        b.setField(vf, v);
      }
    } else if (name.equals(DURATION) || name.equals(TIMESTAMP) || name.equals(FIELD_MASK)) {
      if (!expect(node, ConfigNode.Kind.SCALAR, expected(type), where)) {
        return;
      }
      String text = node.scalar();
      try {
        Message m = name.equals(DURATION) ? Durations.parse(text)
            : name.equals(TIMESTAMP) ? Timestamps.parse(text) : FieldMaskUtil.fromJsonString(text);
        merge(b, m);
      } catch (ParseException | IllegalArgumentException e) {
        problem(node, where, "expected " + expected(type) + ", got `" + text + "`");
      }
    } else if (name.equals(STRUCT)) {
      struct(node, b, where, depth);
    } else if (name.equals(LIST_VALUE)) {
      list(node, b, where, depth);
    } else if (name.equals(VALUE)) {
      jsonValue(node, b, where, depth);
    } else {
      fields(node, b, Set.of(), where, depth);
    }
  }

  private void any(ConfigNode node, Message.Builder b, Where where, int depth) {
    if (!expect(node, ConfigNode.Kind.MAP, "a mapping with `@type` (google.protobuf.Any)", where)) {
      return;
    }
    if (node.entries().isEmpty()) {
      return; // the empty Any, as in proto3 JSON
    }
    ConfigNode.Entry typeEntry = null;
    for (ConfigNode.Entry e : node.entries()) {
      if ("@type".equals(e.key())) {
        typeEntry = e;
        break;
      }
    }
    if (typeEntry == null) {
      problem(node, where, "missing `@type` (an Any names the message it holds, e.g. "
          + "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router)");
      return;
    }
    ConfigNode t = typeEntry.value();
    String url = t.kind() == ConfigNode.Kind.SCALAR ? t.scalar() : null;
    int slash = url == null ? -1 : url.lastIndexOf('/');
    if (slash < 0) {
      problem(t, where.field("@type"), "expected a type URL such as "
          + "type.googleapis.com/envoy.config.cluster.v3.Cluster, got " + describe(t));
      return;
    }
    Descriptor content = registry.find(url.substring(slash + 1));
    if (content == null) {
      String closest = registry.closest(url.substring(slash + 1));
      problem(t, where.field("@type"), "unknown type `" + url + "`" + (closest == null ? ""
          : "; did you mean `" + url.substring(0, slash + 1) + closest + "`?"));
      return;
    }
    Descriptor anyType = b.getDescriptorForType();
    b.setField(anyType.findFieldByName("type_url"), url);
    Message.Builder cb = DynamicMessage.getDefaultInstance(content).newBuilderForType();
    String name = content.getFullName();
    boolean special = name.equals(ANY) || WRAPPERS.contains(name) || name.equals(DURATION)
        || name.equals(TIMESTAMP) || name.equals(FIELD_MASK) || name.equals(STRUCT)
        || name.equals(LIST_VALUE) || name.equals(VALUE);
    if (special) {
      // A well-known type in an Any is {"@type": ..., "value": <its JSON form>}.
      for (ConfigNode.Entry e : node.entries()) {
        if ("value".equals(e.key())) {
          if (depth >= MAX_DEPTH) {
            problem(e.value(), where, "nested deeper than " + MAX_DEPTH + " messages");
            return;
          }
          message(e.value(), cb, where.field("value"), depth + 1);
        } else if (!"@type".equals(e.key())) {
          problem(e, where, "unknown field `" + e.key() + "` in an Any holding " + name
              + " (expected `value`)");
        }
      }
    } else {
      fields(node, cb, Set.of("@type"), where, depth);
    }
    b.setField(anyType.findFieldByName("value"), cb.build().toByteString());
  }

  private void struct(ConfigNode node, Message.Builder b, Where where, int depth) {
    if (!expect(node, ConfigNode.Kind.MAP, "a mapping", where)) {
      return;
    }
    map(b.getDescriptorForType().findFieldByName("fields"), node, b, where, depth);
  }

  private void list(ConfigNode node, Message.Builder b, Where where, int depth) {
    if (!expect(node, ConfigNode.Kind.SEQ, "a list", where)) {
      return;
    }
    field(b.getDescriptorForType().findFieldByName("values"), node, b, where, depth);
  }

  /**
   * A google.protobuf.Value: no field type to go by, so a YAML plain scalar is what YAML 1.2's
   * core schema makes of it ({@code 1e3} a number, {@code true} a bool, {@code yes} a string).
   */
  private void jsonValue(ConfigNode node, Message.Builder b, Where where, int depth) {
    Descriptor type = b.getDescriptorForType();
    switch (node.kind()) {
      case MAP, SEQ -> {
        FieldDescriptor fd = type.findFieldByName(
            node.kind() == ConfigNode.Kind.MAP ? "struct_value" : "list_value");
        if (depth >= MAX_DEPTH) {
          problem(node, where, "nested deeper than " + MAX_DEPTH + " messages");
          return;
        }
        Message.Builder sub = b.newBuilderForField(fd);
        message(node, sub, where, depth + 1);
        b.setField(fd, sub.build());
      }
      case NULL -> b.setField(type.findFieldByName("null_value"),
          NullValue.NULL_VALUE.getValueDescriptor());
      case SCALAR -> {
        String text = node.scalar();
        switch (node.core()) {
          case BOOL -> b.setField(type.findFieldByName("bool_value"),
              text.equalsIgnoreCase("true"));
          case INT -> b.setField(type.findFieldByName("number_value"), coreInt(text));
          case FLOAT -> b.setField(type.findFieldByName("number_value"), coreFloat(text));
          default -> b.setField(type.findFieldByName("string_value"), text);
        }
      }
      default -> throw new IllegalStateException(node.kind().toString());
    }
  }

  /** Merges a message by its bytes, so a generated message merges into a DynamicMessage too. */
  private static Message.Builder merge(Message.Builder b, Message m) {
    try {
      return b.mergeFrom(m.toByteString());
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new IllegalStateException("a message's own bytes do not parse", e);
    }
  }

  /** A core-schema int: decimal, {@code 0o17} or {@code 0x1F}; a JSON integer. */
  private static double coreInt(String text) {
    if (text.startsWith("0o")) {
      return new BigInteger(text.substring(2), 8).doubleValue();
    }
    if (text.startsWith("0x")) {
      return new BigInteger(text.substring(2), 16).doubleValue();
    }
    return Double.parseDouble(text);
  }

  /** A core-schema float: decimal, {@code .inf}, {@code -.inf}, {@code .nan}; a JSON number. */
  private static double coreFloat(String text) {
    String t = text.toLowerCase(java.util.Locale.ROOT);
    if (t.equals(".nan")) {
      return Double.NaN;
    }
    if (t.endsWith(".inf")) {
      return t.startsWith("-") ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
    }
    return Double.parseDouble(text);
  }

  /** A null for this field: a JSON null, or a YAML null unless a string field takes its text. */
  private static boolean isNull(ConfigNode node, boolean stringTarget) {
    if (node.kind() != ConfigNode.Kind.NULL) {
      return false;
    }
    // `~` and `null` into a string field are text as written; an empty value is no value.
    return !(stringTarget && node.plain() && node.scalar() != null && !node.scalar().isEmpty());
  }

  /** A scalar field's value from its text, by proto3 JSON's rules (as JsonFormat reads them). */
  private static Object scalar(FieldDescriptor fd, String text) throws BadScalar {
    switch (fd.getType()) {
      case INT32, SINT32, SFIXED32 -> {
        return int32(fd, text);
      }
      case INT64, SINT64, SFIXED64 -> {
        try {
          return Long.parseLong(text);
        } catch (NumberFormatException e) {
          try {
            return decimal(fd, text).longValueExact();
          } catch (ArithmeticException x) {
            throw bad(fd, text);
          }
        }
      }
      case UINT32, FIXED32 -> {
        BigInteger v = whole(fd, text);
        if (v.signum() < 0 || v.bitLength() > 32) {
          throw bad(fd, text);
        }
        return v.intValue();
      }
      case UINT64, FIXED64 -> {
        BigInteger v = whole(fd, text);
        if (v.signum() < 0 || v.bitLength() > 64) {
          throw bad(fd, text);
        }
        return v.longValue();
      }
      case BOOL -> {
        if (text.equals("true")) {
          return true;
        }
        if (text.equals("false")) {
          return false;
        }
        throw bad(fd, text);
      }
      case FLOAT -> {
        double d = special(text);
        if (Double.isNaN(d) && !text.equals("NaN")) {
          try {
            d = Double.parseDouble(text);
          } catch (NumberFormatException e) {
            throw bad(fd, text);
          }
          if (Math.abs(d) > Float.MAX_VALUE * (1.0 + 1e-6)) {
            throw bad(fd, text);
          }
        }
        return (float) d;
      }
      case DOUBLE -> {
        double d = special(text);
        if (Double.isNaN(d) && !text.equals("NaN")) {
          BigDecimal v = decimal(fd, text);
          if (v.abs().compareTo(MAX_DOUBLE) > 0) {
            throw bad(fd, text);
          }
          d = v.doubleValue();
        }
        return d;
      }
      case BYTES -> {
        try {
          return ByteString.copyFrom(Base64.getDecoder().decode(text));
        } catch (IllegalArgumentException e) {
          try {
            return ByteString.copyFrom(Base64.getUrlDecoder().decode(text));
          } catch (IllegalArgumentException x) {
            throw bad(fd, text);
          }
        }
      }
      case ENUM -> {
        EnumDescriptor type = fd.getEnumType();
        EnumValueDescriptor v = type.findValueByName(text);
        if (v == null) {
          try {
            int number = int32(fd, text);
            v = type.isClosed() ? type.findValueByNumber(number)
                : type.findValueByNumberCreatingIfUnknown(number);
          } catch (BadScalar e) {
            // not a number either
          }
        }
        if (v == null) {
          throw new BadScalar("`" + text + "` is not a value of " + type.getFullName()
              + didYouMeanEnum(text, type));
        }
        return v;
      }
      default -> throw new IllegalStateException("not a scalar field: " + fd.getFullName());
    }
  }

  private static int int32(FieldDescriptor fd, String text) throws BadScalar {
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      try {
        return decimal(fd, text).intValueExact();
      } catch (ArithmeticException x) {
        throw bad(fd, text);
      }
    }
  }

  private static final BigDecimal MAX_DOUBLE =
      new BigDecimal(String.valueOf(Double.MAX_VALUE)).multiply(new BigDecimal("1.000001"));

  /** NaN for text that is not one of proto3 JSON's special float values. */
  private static double special(String text) {
    return switch (text) {
      case "Infinity" -> Double.POSITIVE_INFINITY;
      case "-Infinity" -> Double.NEGATIVE_INFINITY;
      default -> Double.NaN;
    };
  }

  private static BigDecimal decimal(FieldDescriptor fd, String text) throws BadScalar {
    try {
      return new BigDecimal(text);
    } catch (NumberFormatException e) {
      throw bad(fd, text);
    }
  }

  private static BigInteger whole(FieldDescriptor fd, String text) throws BadScalar {
    try {
      return decimal(fd, text).toBigIntegerExact();
    } catch (ArithmeticException e) {
      throw bad(fd, text);
    }
  }

  private static BadScalar bad(FieldDescriptor fd, String text) {
    String hint = "";
    if (fd.getType() == FieldDescriptor.Type.BOOL) {
      hint = text.matches("(?i)yes|no|on|off|y|n|true|false")
          ? " (YAML 1.1's yes/no/on/off and capitalized forms are not booleans here)" : "";
    } else if (text.matches("[-+]?0[xXoObB].*") || text.contains("_")) {
      hint = " (proto3 JSON numbers are decimal, without underscores)";
    } else if (text.matches("(?i)[-+]?\\.(inf|nan)")) {
      hint = " (proto3 JSON writes Infinity, -Infinity and NaN)";
    }
    return new BadScalar("expected " + expected(fd) + ", got `" + text + "`" + hint);
  }

  private static String expected(FieldDescriptor fd) {
    return switch (fd.getType()) {
      case INT32, SINT32, SFIXED32 -> "an int32 (a whole number from -2147483648 to 2147483647)";
      case INT64, SINT64, SFIXED64 -> "an int64 (a whole number)";
      case UINT32, FIXED32 -> "a uint32 (a whole number from 0 to 4294967295)";
      case UINT64, FIXED64 -> "a uint64 (a whole number from 0)";
      case BOOL -> "true or false";
      case FLOAT -> "a float (a number, Infinity, -Infinity or NaN)";
      case DOUBLE -> "a double (a number, Infinity, -Infinity or NaN)";
      case BYTES -> "base64 bytes";
      case STRING -> "a string";
      case ENUM -> "a value of " + fd.getEnumType().getFullName();
      default -> expected(fd.getMessageType());
    };
  }

  private static String expected(Descriptor type) {
    String name = type.getFullName();
    if (name.equals(DURATION)) {
      return "a duration in seconds with an `s` suffix, such as 5s or 0.25s";
    }
    if (name.equals(TIMESTAMP)) {
      return "an RFC 3339 timestamp such as 2026-01-01T00:00:00Z";
    }
    if (name.equals(FIELD_MASK)) {
      return "a field mask such as a.b,c";
    }
    return "a mapping (" + name + ")";
  }

  private static String describe(ConfigNode node) {
    return switch (node.kind()) {
      case MAP -> "a mapping";
      case SEQ -> "a list";
      case NULL -> "null";
      case SCALAR -> "`" + node.scalar() + "`";
    };
  }

  private boolean expect(ConfigNode node, ConfigNode.Kind kind, String what, Where where) {
    if (node.kind() == kind) {
      return true;
    }
    problem(node, where, "expected " + what + ", got " + describe(node));
    return false;
  }

  private boolean unsupported(ConfigNode node, Where where) {
    String why = node.unsupported();
    if (why != null) {
      problem(node, where, why);
    }
    return why != null;
  }

  private static String didYouMeanField(String key, Descriptor type) {
    FieldDescriptor best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (FieldDescriptor fd : type.getFields()) {
      int d = Suggest.distance(key, fd.getName());
      if (d < bestDistance) {
        best = fd;
        bestDistance = d;
      }
    }
    return best == null ? ""
        : "; did you mean `" + (Suggest.camel(key) ? best.getJsonName() : best.getName()) + "`?";
  }

  private static String didYouMeanEnum(String text, EnumDescriptor type) {
    EnumValueDescriptor best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (EnumValueDescriptor v : type.getValues()) {
      int d = Suggest.distance(text, v.getName());
      if (d < bestDistance) {
        best = v;
        bestDistance = d;
      }
    }
    return best == null ? "" : "; did you mean `" + best.getName() + "`?";
  }

  private static String at(ConfigNode.Entry e) {
    return "line " + e.keyLine() + ", column " + e.keyColumn();
  }

  private void problem(ConfigNode at, Where where, String message) {
    problems.add(new Problem(at.line(), at.column(), where.toString(), message));
  }

  private void problem(ConfigNode.Entry at, Where where, String message) {
    problems.add(new Problem(at.keyLine(), at.keyColumn(), where.toString(), message));
  }

  /** A scalar that its field does not accept; the message says what was expected. */
  private static final class BadScalar extends Exception {
    BadScalar(String message) {
      super(message, null, false, false);
    }
  }

  /** A path in a resource, rendered only for a problem: {@code filter_chains[0].filters[1].name}. */
  private record Where(Where parent, String name, int index) {
    static final Where ROOT = new Where(null, null, -1);

    Where field(String n) {
      return new Where(this, n, -1);
    }

    Where index(int i) {
      return new Where(this, null, i);
    }

    Where key(String k) {
      return new Where(this, k, -2);
    }

    @Override
    public String toString() {
      if (parent == null) {
        return "";
      }
      String p = parent.toString();
      if (index >= 0) {
        return p + "[" + index + "]";
      }
      if (index == -2) {
        return p + "[" + name + "]";
      }
      return p.isEmpty() ? name : p + "." + name;
    }
  }
}
