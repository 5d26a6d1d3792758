package dev.meridian.internal.pgv;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.AnyProto;
import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Label;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto.Type;
import com.google.protobuf.DescriptorProtos.FieldOptions;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MessageOptions;
import com.google.protobuf.DescriptorProtos.OneofDescriptorProto;
import com.google.protobuf.DescriptorProtos.OneofOptions;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Duration;
import com.google.protobuf.DurationProto;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import com.google.protobuf.StringValue;
import com.google.protobuf.Timestamp;
import com.google.protobuf.TimestampProto;
import com.google.protobuf.UInt32Value;
import com.google.protobuf.WrappersProto;
import io.envoyproxy.pgv.validate.Validate;
import io.envoyproxy.pgv.validate.Validate.AnyRules;
import io.envoyproxy.pgv.validate.Validate.BytesRules;
import io.envoyproxy.pgv.validate.Validate.DoubleRules;
import io.envoyproxy.pgv.validate.Validate.DurationRules;
import io.envoyproxy.pgv.validate.Validate.EnumRules;
import io.envoyproxy.pgv.validate.Validate.FieldRules;
import io.envoyproxy.pgv.validate.Validate.FloatRules;
import io.envoyproxy.pgv.validate.Validate.Int32Rules;
import io.envoyproxy.pgv.validate.Validate.Int64Rules;
import io.envoyproxy.pgv.validate.Validate.KnownRegex;
import io.envoyproxy.pgv.validate.Validate.MapRules;
import io.envoyproxy.pgv.validate.Validate.MessageRules;
import io.envoyproxy.pgv.validate.Validate.RepeatedRules;
import io.envoyproxy.pgv.validate.Validate.SFixed64Rules;
import io.envoyproxy.pgv.validate.Validate.SInt32Rules;
import io.envoyproxy.pgv.validate.Validate.StringRules;
import io.envoyproxy.pgv.validate.Validate.TimestampRules;
import io.envoyproxy.pgv.validate.Validate.UInt32Rules;
import io.envoyproxy.pgv.validate.Validate.UInt64Rules;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Each rule kind on message types built at run time, as a descriptor set read from a file gives
 * them: with the rules in the options as extensions, and (the "unknown" runs) as unknown fields.
 * A valid value next to an invalid one, so that every check can be seen to pass and to fail.
 */
class PgvRuleKindsTest {
  private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
  private final PgvRules rules = new PgvRules(url -> null, Clock.fixed(NOW, ZoneOffset.UTC));

  // ---- building types ----

  /** One message type "T" with the given fields, in a file of its own. */
  private static Descriptor type(boolean unknown, Consumer<DescriptorProto.Builder> body) {
    DescriptorProto.Builder t = DescriptorProto.newBuilder().setName("T");
    body.accept(t);
    FileDescriptorProto file = FileDescriptorProto.newBuilder().setName("t.proto")
        .setPackage("kinds").setSyntax("proto3")
        .addDependency("google/protobuf/duration.proto")
        .addDependency("google/protobuf/timestamp.proto")
        .addDependency("google/protobuf/wrappers.proto")
        .addDependency("google/protobuf/any.proto")
        .addMessageType(t)
        .addEnumType(com.google.protobuf.DescriptorProtos.EnumDescriptorProto.newBuilder()
            .setName("Color")
            .addValue(enumValue("COLOR_UNSET", 0)).addValue(enumValue("RED", 1))
            .addValue(enumValue("GREEN", 2)))
        .build();
    try {
      if (unknown) {
        // as read from bytes by a reader that does not know PGV's extensions
        file = FileDescriptorProto.parseFrom(file.toByteString());
      }
      return FileDescriptor.buildFrom(file, new FileDescriptor[] {DurationProto.getDescriptor(),
          TimestampProto.getDescriptor(), WrappersProto.getDescriptor(), AnyProto.getDescriptor()})
          .findMessageTypeByName("T");
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto enumValue(
      String name, int n) {
    return com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto.newBuilder()
        .setName(name).setNumber(n).build();
  }

  private static FieldDescriptorProto.Builder field(String name, int number, Type type,
      FieldRules rules) {
    FieldDescriptorProto.Builder f = FieldDescriptorProto.newBuilder().setName(name)
        .setNumber(number).setType(type).setLabel(Label.LABEL_OPTIONAL);
    if (rules != null) {
      f.setOptions(FieldOptions.newBuilder().setExtension(Validate.rules, rules));
    }
    return f;
  }

  private static FieldDescriptorProto.Builder message(String name, int number, String typeName,
      FieldRules rules) {
    return field(name, number, Type.TYPE_MESSAGE, rules).setTypeName(typeName);
  }

  /** A type with one field "v" of {@code type} and {@code rules}. */
  private static Descriptor one(boolean unknown, Type type, FieldRules rules) {
    return type(unknown, t -> t.addField(field("v", 1, type, rules)));
  }

  private static Message with(Descriptor d, String field, Object value) {
    DynamicMessage.Builder b = DynamicMessage.newBuilder(d);
    FieldDescriptor fd = d.findFieldByName(field);
    if (value instanceof List<?> list) {
      for (Object e : list) {
        b.addRepeatedField(fd, e);
      }
    } else {
      b.setField(fd, value);
    }
    return b.build();
  }

  private List<String> check(Message m) {
    return rules.check(m).stream().map(Violation::toString).toList();
  }

  private List<String> ruleNames(Message m) {
    return rules.check(m).stream().map(Violation::rule).toList();
  }

  // ---- numbers ----

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void int32RangesBetweenAndOutside(boolean unknown) {
    Descriptor inside = one(unknown, Type.TYPE_INT32, FieldRules.newBuilder()
        .setInt32(Int32Rules.newBuilder().setGt(0).setLt(10)).build());
    Descriptor outside = one(unknown, Type.TYPE_INT32, FieldRules.newBuilder()
        .setInt32(Int32Rules.newBuilder().setLt(0).setGt(10)).build());

    assertThat(check(with(inside, "v", 5))).isEmpty();
    assertThat(check(with(inside, "v", 10))).containsExactly(
        "v: 10 must be greater than 0 and less than 10 (int32.lt)");
    assertThat(check(with(inside, "v", 0))).containsExactly(
        "v: 0 must be greater than 0 and less than 10 (int32.gt)");
    assertThat(check(with(outside, "v", -1))).isEmpty();
    assertThat(check(with(outside, "v", 11))).isEmpty();
    assertThat(check(with(outside, "v", 5))).containsExactly(
        "v: 5 must be less than 0 or greater than 10 (int32.lt)");
    assertThat(check(with(outside, "v", 10))).hasSize(1);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void unsignedNumbersCompareUnsigned(boolean unknown) {
    Descriptor port = one(unknown, Type.TYPE_UINT32, FieldRules.newBuilder()
        .setUint32(UInt32Rules.newBuilder().setLte(65535)).build());
    Descriptor big = one(unknown, Type.TYPE_UINT64, FieldRules.newBuilder()
        .setUint64(UInt64Rules.newBuilder().setGt(1)).build());

    assertThat(check(with(port, "v", 65535))).isEmpty();
    assertThat(check(with(port, "v", -1))).containsExactly(
        "v: 4294967295 must be at most 65535 (uint32.lte)");
    assertThat(check(with(big, "v", -1L))).isEmpty(); // 2^64 - 1
    assertThat(check(with(big, "v", 1L))).containsExactly("v: 1 must be greater than 1 (uint64.gt)");
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void everyNumericKindHasItsRules(boolean unknown) {
    Object[][] kinds = {
        {Type.TYPE_SINT32, FieldRules.newBuilder().setSint32(SInt32Rules.newBuilder().setGte(-5)),
            -5, -6, "sint32.gte"},
        {Type.TYPE_INT64, FieldRules.newBuilder().setInt64(Int64Rules.newBuilder().setConst(7)),
            7L, 8L, "int64.const"},
        {Type.TYPE_SFIXED64, FieldRules.newBuilder()
            .setSfixed64(SFixed64Rules.newBuilder().addIn(1).addIn(3)), 3L, 2L, "sfixed64.in"},
        {Type.TYPE_FIXED32, FieldRules.newBuilder().setFixed32(
            Validate.Fixed32Rules.newBuilder().addNotIn(4)), 5, 4, "fixed32.not_in"},
        {Type.TYPE_FIXED64, FieldRules.newBuilder().setFixed64(
            Validate.Fixed64Rules.newBuilder().setLt(3)), 2L, 3L, "fixed64.lt"},
        {Type.TYPE_SINT64, FieldRules.newBuilder().setSint64(
            Validate.SInt64Rules.newBuilder().setGt(0)), 1L, 0L, "sint64.gt"},
        {Type.TYPE_SFIXED32, FieldRules.newBuilder().setSfixed32(
            Validate.SFixed32Rules.newBuilder().setLte(0)), 0, 1, "sfixed32.lte"},
        {Type.TYPE_DOUBLE, FieldRules.newBuilder().setDouble(
            DoubleRules.newBuilder().setGte(0.5)), 0.5, 0.25, "double.gte"},
        {Type.TYPE_FLOAT, FieldRules.newBuilder().setFloat(FloatRules.newBuilder().setLt(1)),
            0.5f, 1f, "float.lt"},
    };
    for (Object[] k : kinds) {
      Descriptor d = one(unknown, (Type) k[0], ((FieldRules.Builder) k[1]).build());
      assertThat(ruleNames(with(d, "v", k[2]))).as("%s valid", k[4]).isEmpty();
      assertThat(ruleNames(with(d, "v", k[3]))).as("%s invalid", k[4]).containsExactly((String) k[4]);
    }
  }

  @Test
  void nanPassesEveryBoundButNoConstOrIn() {
    Descriptor gt = one(false, Type.TYPE_DOUBLE,
        FieldRules.newBuilder().setDouble(DoubleRules.newBuilder().setGt(0)).build());
    Descriptor in = one(false, Type.TYPE_FLOAT,
        FieldRules.newBuilder().setFloat(FloatRules.newBuilder().addIn(1f)).build());

    assertThat(check(with(gt, "v", Double.NaN))).isEmpty();
    assertThat(check(with(in, "v", Float.NaN))).containsExactly("v: NaN must be one of 1 (float.in)");
    assertThat(check(with(in, "v", 1f))).isEmpty();
  }

  @Test
  void ignoreEmptyExemptsZero() {
    Descriptor d = one(false, Type.TYPE_INT32, FieldRules.newBuilder()
        .setInt32(Int32Rules.newBuilder().setGt(10).setIgnoreEmpty(true)).build());

    assertThat(check(with(d, "v", 0))).isEmpty();
    assertThat(check(with(d, "v", 3))).hasSize(1);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void boolConst(boolean unknown) {
    Descriptor d = one(unknown, Type.TYPE_BOOL, FieldRules.newBuilder()
        .setBool(Validate.BoolRules.newBuilder().setConst(true)).build());

    assertThat(check(with(d, "v", true))).isEmpty();
    assertThat(check(with(d, "v", false))).containsExactly("v: false must be true (bool.const)");
  }

  // ---- strings ----

  private Descriptor string(boolean unknown, StringRules.Builder r) {
    return one(unknown, Type.TYPE_STRING, FieldRules.newBuilder().setString(r).build());
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void stringLengthsCountCharactersOrBytes(boolean unknown) {
    Descriptor chars = string(unknown, StringRules.newBuilder().setMinLen(3));
    Descriptor bytes = string(unknown, StringRules.newBuilder().setMaxBytes(4));

    assertThat(check(with(chars, "v", "你好吖"))).isEmpty();
    assertThat(check(with(chars, "v", "你好"))).containsExactly(
        "v: \"你好\" must be at least 3 characters long (string.min_len)");
    assertThat(check(with(bytes, "v", "abcd"))).isEmpty();
    assertThat(check(with(bytes, "v", "你好"))).containsExactly(
        "v: \"你好\" must be at most 4 bytes long in UTF-8 (string.max_bytes)");
    assertThat(ruleNames(with(string(unknown, StringRules.newBuilder().setLen(2)), "v", "😀😀")))
        .isEmpty();
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void stringPatternsAreRe2AndMatchTheWholeValue(boolean unknown) {
    Descriptor d = string(unknown, StringRules.newBuilder().setPattern("^[^\u0000\n\r]*$"));
    Descriptor unanchored = string(unknown, StringRules.newBuilder().setPattern("[a-z]+"));

    assertThat(check(with(d, "v", "fine"))).isEmpty();
    assertThat(check(with(d, "v", "a\nb"))).containsExactly(
        "v: \"a\\nb\" must match the pattern \"^[^\\x00\\n\\r]*$\" (string.pattern)");
    assertThat(check(with(unanchored, "v", "abc"))).isEmpty();
    assertThat(check(with(unanchored, "v", "abc1"))).hasSize(1);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void stringAffixesAndSets(boolean unknown) {
    Descriptor d = string(unknown, StringRules.newBuilder().setPrefix("envoy.")
        .setSuffix(".v3").setNotContains(" "));
    Descriptor in = string(unknown, StringRules.newBuilder().addIn("a").addIn("b"));
    Descriptor notIn = string(unknown, StringRules.newBuilder().addNotIn("x"));
    Descriptor contains = string(unknown, StringRules.newBuilder().setContains("::"));

    assertThat(check(with(d, "v", "envoy.x.v3"))).isEmpty();
    assertThat(ruleNames(with(d, "v", "x.v3"))).containsExactly("string.prefix");
    assertThat(ruleNames(with(d, "v", "envoy.x"))).containsExactly("string.suffix");
    assertThat(ruleNames(with(d, "v", "envoy. .v3"))).containsExactly("string.not_contains");
    assertThat(ruleNames(with(in, "v", "c"))).containsExactly("string.in");
    assertThat(ruleNames(with(notIn, "v", "x"))).containsExactly("string.not_in");
    assertThat(ruleNames(with(contains, "v", "a::b"))).isEmpty();
    assertThat(ruleNames(with(contains, "v", "a:b"))).containsExactly("string.contains");
  }

  @Test
  void oneStringFailsOnceThoughItBreaksSeveralRules() {
    Descriptor d = string(false, StringRules.newBuilder().setMinLen(5).setPrefix("x"));

    // as PGV's Go validators report a field: the first rule it breaks
    assertThat(ruleNames(with(d, "v", "ab"))).containsExactly("string.min_len");
  }

  @Test
  void wellKnownStringFormats() {
    Map<StringRules.Builder, List<List<String>>> cases = Map.of(
        StringRules.newBuilder().setHostname(true),
        List.of(List.of("example.com", "ASD.example.com.", "foo-bar.com"),
            List.of("foo_bar.com", "-a.com", "a..b", "你好.com", "")),
        StringRules.newBuilder().setEmail(true),
        List.of(List.of("foo@bar.com", "John Smith <foo@bar.com>"),
            List.of("foobar", "foo@-bar.com", "", "x".repeat(65) + "@example.com")),
        StringRules.newBuilder().setAddress(true),
        List.of(List.of("example.com", "192.168.0.1", "3e::99"),
            List.of("ff::fff::0b", "foo_bar")),
        StringRules.newBuilder().setIp(true),
        List.of(List.of("10.0.0.1", "::1", "::ffff:1.2.3.4"),
            List.of("256.0.0.1", "01.2.3.4", "fe80::1%eth0", "1::2::3")),
        StringRules.newBuilder().setIpv4(true),
        List.of(List.of("192.168.0.1"), List.of("3e::99", "1.2.3")),
        StringRules.newBuilder().setIpv6(true),
        List.of(List.of("2001:db8:85a3::8a2e:370:7334", "::"), List.of("192.168.0.1", "1:2")),
        StringRules.newBuilder().setUri(true),
        List.of(List.of("http://example.com/foo?baz=quux", "mailto:a@b"),
            List.of("/relative", "!@#$%^&*%$#", "http://a b/", "http://host:port/")),
        StringRules.newBuilder().setUriRef(true),
        List.of(List.of("/foo/bar?baz=quux", "http://example.com"),
            List.of("!@#$%^&*%$#", "/a/%zz", "1:b")),
        StringRules.newBuilder().setUuid(true),
        List.of(List.of("8B208305-00E8-4460-A440-5E0DCD83BB0A"),
            List.of("foobar", "ffffffff-ffff-ffff-ffff-fffffffffffff")));
    cases.forEach((r, values) -> {
      Descriptor d = string(false, r);
      String kind = "string." + r.build().getWellKnownCase().name().toLowerCase();
      for (String ok : values.get(0)) {
        assertThat(ruleNames(with(d, "v", ok))).as("%s %s", kind, ok).isEmpty();
      }
      for (String bad : values.get(1)) {
        assertThat(ruleNames(with(d, "v", bad))).as("%s %s", kind, bad).containsExactly(kind);
      }
    });
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void httpHeaderRegexesStrictAndNot(boolean unknown) {
    Descriptor name = string(unknown,
        StringRules.newBuilder().setWellKnownRegex(KnownRegex.HTTP_HEADER_NAME));
    Descriptor value = string(unknown,
        StringRules.newBuilder().setWellKnownRegex(KnownRegex.HTTP_HEADER_VALUE));
    Descriptor loose = string(unknown, StringRules.newBuilder()
        .setWellKnownRegex(KnownRegex.HTTP_HEADER_VALUE).setStrict(false));

    assertThat(check(with(name, "v", ":path"))).isEmpty();
    assertThat(ruleNames(with(name, "v", "a b"))).containsExactly("string.well_known_regex");
    assertThat(check(with(value, "v", "a\tb"))).isEmpty();
    assertThat(ruleNames(with(value, "v", "\u007f"))).containsExactly("string.well_known_regex");
    assertThat(check(with(loose, "v", "\u007f"))).isEmpty();
    assertThat(check(with(loose, "v", "a\rb"))).containsExactly(
        "v: \"a\\rb\" must not contain NUL, CR or LF characters (string.well_known_regex)");
  }

  @Test
  void ignoreEmptyExemptsTheEmptyString() {
    Descriptor d = string(false, StringRules.newBuilder().setUuid(true).setIgnoreEmpty(true));

    assertThat(check(with(d, "v", ""))).isEmpty();
    assertThat(check(with(d, "v", "x"))).hasSize(1);
  }

  // ---- bytes ----

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void bytesRules(boolean unknown) {
    Descriptor len = one(unknown, Type.TYPE_BYTES, FieldRules.newBuilder()
        .setBytes(BytesRules.newBuilder().setMinLen(2).setMaxLen(3)).build());
    Descriptor ip = one(unknown, Type.TYPE_BYTES, FieldRules.newBuilder()
        .setBytes(BytesRules.newBuilder().setIpv4(true)).build());
    Descriptor pattern = one(unknown, Type.TYPE_BYTES, FieldRules.newBuilder()
        .setBytes(BytesRules.newBuilder().setPattern("^[\\x00-\\x7F]+$")).build());
    Descriptor prefix = one(unknown, Type.TYPE_BYTES, FieldRules.newBuilder()
        .setBytes(BytesRules.newBuilder().setPrefix(ByteString.copyFrom(new byte[] {(byte) 0x99})))
        .build());

    assertThat(check(with(len, "v", ByteString.copyFromUtf8("ab")))).isEmpty();
    assertThat(check(with(len, "v", ByteString.copyFromUtf8("abcd")))).containsExactly(
        "v: \"YWJjZA==\" must be between 2 and 3 bytes long (bytes.max_len)");
    assertThat(check(with(ip, "v", ByteString.copyFrom(new byte[] {10, 0, 0, 1})))).isEmpty();
    assertThat(ruleNames(with(ip, "v", ByteString.copyFrom(new byte[16]))))
        .containsExactly("bytes.ipv4");
    assertThat(check(with(pattern, "v", ByteString.copyFromUtf8("Foo123")))).isEmpty();
    assertThat(ruleNames(with(pattern, "v", ByteString.copyFromUtf8("你好"))))
        .containsExactly("bytes.pattern");
    assertThat(check(with(prefix, "v", ByteString.copyFrom(new byte[] {(byte) 0x99, 1}))))
        .isEmpty();
    assertThat(check(with(prefix, "v", ByteString.copyFromUtf8("bar")))).containsExactly(
        "v: \"YmFy\" must start with \"\\x99\" (bytes.prefix)");
  }

  // ---- enums ----

  private Descriptor color(boolean unknown, EnumRules.Builder r) {
    return type(unknown, t -> t.addField(field("v", 1, Type.TYPE_ENUM,
        FieldRules.newBuilder().setEnum(r).build()).setTypeName(".kinds.Color")));
  }

  private static Object color(Descriptor d, int n) {
    return d.getFile().findEnumTypeByName("Color").findValueByNumberCreatingIfUnknown(n);
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void enumRules(boolean unknown) {
    Descriptor defined = color(unknown, EnumRules.newBuilder().setDefinedOnly(true));
    Descriptor constant = color(unknown, EnumRules.newBuilder().setConst(1));
    Descriptor in = color(unknown, EnumRules.newBuilder().addIn(0).addIn(2));
    Descriptor notIn = color(unknown, EnumRules.newBuilder().addNotIn(0));

    assertThat(check(with(defined, "v", color(defined, 2)))).isEmpty();
    assertThat(check(with(defined, "v", color(defined, 7)))).containsExactly(
        "v: 7 must be one of the values Color defines (enum.defined_only)");
    assertThat(check(with(constant, "v", color(constant, 2)))).containsExactly(
        "v: GREEN must be RED (enum.const)");
    assertThat(check(with(in, "v", color(in, 2)))).isEmpty();
    assertThat(ruleNames(with(in, "v", color(in, 1)))).containsExactly("enum.in");
    assertThat(ruleNames(with(notIn, "v", color(notIn, 0)))).containsExactly("enum.not_in");
    assertThat(check(with(notIn, "v", color(notIn, 9)))).isEmpty();
  }

  // ---- messages, oneofs, disabled types ----

  /** "T" holds an "Inner" with a string that must not be empty. */
  private static Descriptor nested(boolean unknown, FieldRules outer, boolean innerDisabled) {
    return type(unknown, t -> {
      DescriptorProto.Builder inner = DescriptorProto.newBuilder().setName("Inner")
          .addField(field("name", 1, Type.TYPE_STRING, FieldRules.newBuilder()
              .setString(StringRules.newBuilder().setMinLen(1)).build()));
      if (innerDisabled) {
        inner.setOptions(MessageOptions.newBuilder().setExtension(Validate.disabled, true));
      }
      t.addNestedType(inner);
      t.addField(message("inner", 1, ".kinds.T.Inner", outer));
      t.addField(message("items", 2, ".kinds.T.Inner", null).setLabel(Label.LABEL_REPEATED));
    });
  }

  private static Message innerWith(Descriptor t, String name) {
    Descriptor inner = t.findNestedTypeByName("Inner");
    return DynamicMessage.newBuilder(inner).setField(inner.findFieldByName("name"), name).build();
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void messagesAreWalkedRequiredAndSkipped(boolean unknown) {
    Descriptor plain = nested(unknown, null, false);
    Descriptor required = nested(unknown, FieldRules.newBuilder()
        .setMessage(MessageRules.newBuilder().setRequired(true)).build(), false);
    Descriptor skipped = nested(unknown, FieldRules.newBuilder()
        .setMessage(MessageRules.newBuilder().setSkip(true)).build(), false);

    assertThat(check(DynamicMessage.getDefaultInstance(plain))).isEmpty();
    assertThat(check(with(plain, "inner", innerWith(plain, "")))).containsExactly(
        "inner.name: \"\" must be at least 1 character long (string.min_len)");
    assertThat(check(with(plain, "items", List.of(innerWith(plain, "a"), innerWith(plain, "")))))
        .containsExactly("items[1].name: \"\" must be at least 1 character long (string.min_len)");
    assertThat(check(DynamicMessage.getDefaultInstance(required))).containsExactly(
        "inner: is required (message.required)");
    assertThat(check(with(skipped, "inner", innerWith(skipped, "")))).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aDisabledOrIgnoredTypeIsNeitherCheckedNorWalked(boolean unknown) {
    Descriptor disabled = nested(unknown, null, true);
    assertThat(check(with(disabled, "inner", innerWith(disabled, "")))).isEmpty();

    Descriptor ignored = type(unknown, t -> t.setOptions(MessageOptions.newBuilder()
            .setExtension(Validate.ignored, true))
        .addField(field("v", 1, Type.TYPE_STRING, FieldRules.newBuilder()
            .setString(StringRules.newBuilder().setMinLen(1)).build())));
    assertThat(check(DynamicMessage.getDefaultInstance(ignored))).isEmpty();
    assertThat(rules.plan(ignored)).isNull();
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aRequiredOneofNeedsOneMemberAndChecksOnlyTheOneSet(boolean unknown) {
    Descriptor d = type(unknown, t -> t
        .addOneofDecl(OneofDescriptorProto.newBuilder().setName("choice")
            .setOptions(OneofOptions.newBuilder().setExtension(Validate.required, true)))
        .addField(field("a", 1, Type.TYPE_STRING, FieldRules.newBuilder()
            .setString(StringRules.newBuilder().setMinLen(3)).build()).setOneofIndex(0))
        .addField(field("b", 2, Type.TYPE_INT32, FieldRules.newBuilder()
            .setInt32(Int32Rules.newBuilder().setGt(0)).build()).setOneofIndex(0)));

    assertThat(check(DynamicMessage.getDefaultInstance(d))).containsExactly(
        "choice: is required: set one of a, b (oneof.required)");
    assertThat(check(with(d, "b", 4))).isEmpty();
    assertThat(check(with(d, "a", "xy"))).containsExactly(
        "a: \"xy\" must be at least 3 characters long (string.min_len)");
  }

  // ---- repeated and maps ----

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void repeatedCountsUniquenessAndItems(boolean unknown) {
    Descriptor d = type(unknown, t -> t.addField(field("v", 1, Type.TYPE_STRING,
        FieldRules.newBuilder().setRepeated(RepeatedRules.newBuilder().setMinItems(1)
            .setMaxItems(3).setUnique(true).setItems(FieldRules.newBuilder()
                .setString(StringRules.newBuilder().setMaxLen(3)))).build())
        .setLabel(Label.LABEL_REPEATED)));

    assertThat(check(with(d, "v", List.of("a", "b")))).isEmpty();
    assertThat(check(with(d, "v", List.of()))).containsExactly(
        "v: [] must have between 1 and 3 items (repeated.min_items)");
    assertThat(check(with(d, "v", List.of("a", "b", "c", "d")))).containsExactly(
        "v: [\"a\", \"b\", \"c\", \"d\"] must have between 1 and 3 items (repeated.max_items)");
    assertThat(check(with(d, "v", List.of("a", "long", "a")))).containsExactly(
        "v[1]: \"long\" must be at most 3 characters long (string.max_len)",
        "v[2]: \"a\" must not repeat an earlier item (items must be unique) (repeated.unique)");
  }

  @Test
  void floatsAreUniqueAsPgvComparesThem() {
    Descriptor d = type(false, t -> t.addField(field("v", 1, Type.TYPE_DOUBLE,
        FieldRules.newBuilder().setRepeated(RepeatedRules.newBuilder().setUnique(true)).build())
        .setLabel(Label.LABEL_REPEATED)));

    assertThat(ruleNames(with(d, "v", List.of(0.0, -0.0)))).containsExactly("repeated.unique");
    assertThat(ruleNames(with(d, "v", List.of(Double.NaN, Double.NaN)))).isEmpty();
  }

  @Test
  void emptyRepeatedFieldsAreExemptWithIgnoreEmpty() {
    Descriptor d = type(false, t -> t.addField(field("v", 1, Type.TYPE_INT32,
        FieldRules.newBuilder().setRepeated(RepeatedRules.newBuilder().setMinItems(2)
            .setIgnoreEmpty(true)).build()).setLabel(Label.LABEL_REPEATED)));

    assertThat(check(with(d, "v", List.of()))).isEmpty();
    assertThat(check(with(d, "v", List.of(1)))).hasSize(1);
  }

  /** "T" with map<string, Inner> "m", the map's rules given. */
  private static Descriptor map(boolean unknown, MapRules.Builder r, Type valueType) {
    return type(unknown, t -> {
      t.addNestedType(DescriptorProto.newBuilder().setName("Inner")
          .addField(field("name", 1, Type.TYPE_STRING, FieldRules.newBuilder()
              .setString(StringRules.newBuilder().setMinLen(1)).build())));
      DescriptorProto.Builder entry = DescriptorProto.newBuilder().setName("MEntry")
          .setOptions(MessageOptions.newBuilder().setMapEntry(true))
          .addField(field("key", 1, Type.TYPE_STRING, null));
      entry.addField(valueType == Type.TYPE_MESSAGE ? message("value", 2, ".kinds.T.Inner", null)
          : field("value", 2, valueType, null));
      t.addNestedType(entry);
      t.addField(message("m", 1, ".kinds.T.MEntry", FieldRules.newBuilder().setMap(r).build())
          .setLabel(Label.LABEL_REPEATED));
    });
  }

  private static Message withMap(Descriptor t, Map<String, Object> entries) {
    Descriptor entry = t.findNestedTypeByName("MEntry");
    DynamicMessage.Builder b = DynamicMessage.newBuilder(t);
    entries.forEach((k, v) -> b.addRepeatedField(t.findFieldByName("m"),
        DynamicMessage.newBuilder(entry).setField(entry.findFieldByName("key"), k)
            .setField(entry.findFieldByName("value"), v).build()));
    return b.build();
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void mapPairsKeysAndValues(boolean unknown) {
    Descriptor d = map(unknown, MapRules.newBuilder().setMinPairs(1)
        .setKeys(FieldRules.newBuilder().setString(StringRules.newBuilder().setPattern("[a-z]+")))
        .setValues(FieldRules.newBuilder().setString(StringRules.newBuilder().setMinLen(2))),
        Type.TYPE_STRING);

    assertThat(check(withMap(d, Map.of("ab", "xy")))).isEmpty();
    assertThat(check(withMap(d, Map.of()))).containsExactly(
        "m: must have at least 1 entry (map.min_pairs)");
    assertThat(check(withMap(d, Map.of("A", "xy")))).containsExactly(
        "m[\"A\"]: \"A\" key must match the pattern \"[a-z]+\" (map.keys)");
    assertThat(check(withMap(d, Map.of("ab", "x")))).containsExactly(
        "m[\"ab\"]: \"x\" must be at least 2 characters long (string.min_len)");
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void mapValuesThatAreMessagesAreWalked(boolean unknown) {
    Descriptor d = map(unknown, MapRules.newBuilder(), Type.TYPE_MESSAGE);

    assertThat(check(withMap(d, Map.of("k", innerWith(d, ""))))).containsExactly(
        "m[\"k\"].name: \"\" must be at least 1 character long (string.min_len)");
    assertThat(check(withMap(d, Map.of("k", innerWith(d, "n"))))).isEmpty();
  }

  // ---- well-known types ----

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void durationRules(boolean unknown) {
    Descriptor d = type(unknown, t -> t
        .addField(message("range", 1, ".google.protobuf.Duration", FieldRules.newBuilder()
            .setDuration(DurationRules.newBuilder().setRequired(true)
                .setGte(Duration.newBuilder().setSeconds(1))
                .setLt(Duration.newBuilder().setSeconds(60))).build()))
        .addField(message("in", 2, ".google.protobuf.Duration", FieldRules.newBuilder()
            .setDuration(DurationRules.newBuilder()
                .addIn(Duration.newBuilder().setNanos(500_000_000))).build())));

    assertThat(check(with(d, "range", Duration.newBuilder().setSeconds(1).build()))).isEmpty();
    assertThat(check(DynamicMessage.getDefaultInstance(d))).containsExactly(
        "range: is required (duration.required)");
    assertThat(check(with(d, "range", Duration.newBuilder().setSeconds(60).build())))
        .containsExactly("range: 60s must be at least 1s and less than 60s (duration.lt)");
    Message both = DynamicMessage.newBuilder(with(d, "range",
            Duration.newBuilder().setSeconds(2).build()))
        .setField(d.findFieldByName("in"), Duration.newBuilder().setSeconds(1).build()).build();
    assertThat(check(both)).containsExactly("in: 1s must be one of 0.500s (duration.in)");
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void timestampRulesAgainstTheInjectedClock(boolean unknown) {
    Descriptor d = type(unknown, t -> t
        .addField(message("past", 1, ".google.protobuf.Timestamp", FieldRules.newBuilder()
            .setTimestamp(TimestampRules.newBuilder().setLtNow(true)
                .setWithin(Duration.newBuilder().setSeconds(3600))).build()))
        .addField(message("after", 2, ".google.protobuf.Timestamp", FieldRules.newBuilder()
            .setTimestamp(TimestampRules.newBuilder()
                .setGt(Timestamp.newBuilder().setSeconds(7))).build())));
    long now = NOW.getEpochSecond();

    assertThat(check(with(d, "past", ts(now - 60)))).isEmpty();
    assertThat(check(with(d, "past", ts(now + 60)))).containsExactly(
        "past: 2026-01-01T00:01:00Z must be in the past, within 3600s of now (timestamp.lt_now)");
    assertThat(ruleNames(with(d, "past", ts(now - 7200)))).containsExactly("timestamp.lt_now");
    assertThat(check(with(d, "after", ts(8)))).isEmpty();
    assertThat(check(with(d, "after", ts(7)))).containsExactly(
        "after: 1970-01-01T00:00:07Z must be greater than 1970-01-01T00:00:07Z (timestamp.gt)");
  }

  private static Timestamp ts(long seconds) {
    return Timestamp.newBuilder().setSeconds(seconds).build();
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void anyRulesOnTheTypeUrl(boolean unknown) {
    Descriptor d = type(unknown, t -> t.addField(message("v", 1, ".google.protobuf.Any",
        FieldRules.newBuilder().setAny(AnyRules.newBuilder().setRequired(true)
            .addIn("type.googleapis.com/google.protobuf.Duration")).build())));

    assertThat(check(with(d, "v", Any.pack(Duration.getDefaultInstance())))).isEmpty();
    assertThat(check(DynamicMessage.getDefaultInstance(d))).containsExactly(
        "v: is required (any.required)");
    assertThat(check(with(d, "v", Any.pack(Timestamp.getDefaultInstance())))).containsExactly(
        "v: \"type.googleapis.com/google.protobuf.Timestamp\" must hold one of the types"
            + " \"type.googleapis.com/google.protobuf.Duration\" (any.in)");
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void wrappersCarryTheirScalarsRulesAndAreCheckedOnlyWhenSet(boolean unknown) {
    Descriptor d = type(unknown, t -> t
        .addField(message("port", 1, ".google.protobuf.UInt32Value", FieldRules.newBuilder()
            .setUint32(UInt32Rules.newBuilder().setLte(65535)).build()))
        .addField(message("name", 2, ".google.protobuf.StringValue", FieldRules.newBuilder()
            .setString(StringRules.newBuilder().setMinLen(1))
            .setMessage(MessageRules.newBuilder().setRequired(true)).build())));
    Message named = with(d, "name", StringValue.of("n"));

    assertThat(check(named)).isEmpty();
    assertThat(check(DynamicMessage.newBuilder(named)
        .setField(d.findFieldByName("port"), UInt32Value.of(70000)).build())).containsExactly(
        "port: 70000 must be at most 65535 (uint32.lte)");
    assertThat(check(DynamicMessage.getDefaultInstance(d))).containsExactly(
        "name: is required (message.required)");
    assertThat(check(with(d, "name", StringValue.of("")))).containsExactly(
        "name: \"\" must be at least 1 character long (string.min_len)");
  }

  @Test
  void aPackedMessageIsCheckedWhereTheAnyIs() {
    Descriptor inner = nested(false, null, false).findNestedTypeByName("Inner");
    PgvRules withTypes = new PgvRules(url -> url.endsWith("/kinds.T.Inner") ? inner : null,
        Clock.systemUTC());
    Descriptor holder = type(false, t -> t.addField(message("config", 1, ".google.protobuf.Any",
        null)));
    Message packed = with(holder, "config", Any.newBuilder()
        .setTypeUrl("type.googleapis.com/kinds.T.Inner")
        .setValue(innerWith(inner.getContainingType(), "").toByteString()).build());

    assertThat(withTypes.check(packed)).map(Violation::toString).containsExactly(
        "config.name: \"\" must be at least 1 character long (string.min_len)");
  }

  @Test
  void longValuesAreClipped() {
    Descriptor d = string(false, StringRules.newBuilder().setMaxLen(3));

    String value = rules.check(with(d, "v", "x".repeat(500))).get(0).value();
    assertThat(value).hasSize(Render.CLIP + 1).endsWith("…");
  }
}
