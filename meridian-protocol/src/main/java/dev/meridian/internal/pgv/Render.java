package dev.meridian.internal.pgv;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import java.util.Base64;
import java.util.List;

/** Values written as proto3 JSON writes them, for violations; rule operands for reasons. */
final class Render {
  /** Past this many characters a rendered value is cut: a reader needs to find it, not all of it. */
  static final int CLIP = 100;

  private Render() {}

  static String clip(String s) {
    return s.length() <= CLIP ? s : s.substring(0, CLIP) + "…";
  }

  /** A scalar, message or list value of {@code fd}, clipped. */
  static String value(FieldDescriptor fd, Object v) {
    if (v instanceof List<?> list) {
      StringBuilder b = new StringBuilder("[");
      for (Object e : list) {
        if (b.length() > 1) {
          b.append(", ");
        }
        if (b.length() > CLIP) {
          b.append("…");
          break;
        }
        b.append(element(fd, e));
      }
      return clip(b.append(']').toString());
    }
    return clip(element(fd, v));
  }

  /** One value of {@code fd}'s type (an element when {@code fd} is repeated). */
  static String element(FieldDescriptor fd, Object v) {
    switch (fd.getJavaType()) {
      case STRING:
        return jsonQuote((String) v);
      case BYTE_STRING:
        return '"' + Base64.getEncoder().encodeToString(((ByteString) v).toByteArray()) + '"';
      case ENUM:
        EnumValueDescriptor e = (EnumValueDescriptor) v;
        EnumValueDescriptor known = e.getType().findValueByNumber(e.getNumber());
        return known != null ? known.getName() : Integer.toString(e.getNumber());
      case INT:
        return unsigned(fd.getType()) ? Integer.toUnsignedString((Integer) v) : v.toString();
      case LONG:
        return unsigned(fd.getType()) ? Long.toUnsignedString((Long) v) : v.toString();
      case FLOAT:
        return number(((Float) v).doubleValue(), true);
      case DOUBLE:
        return number((Double) v, false);
      case BOOLEAN:
        return v.toString();
      case MESSAGE:
        return message((MessageOrBuilder) v);
      default:
        return String.valueOf(v);
    }
  }

  private static boolean unsigned(FieldDescriptor.Type t) {
    return t == FieldDescriptor.Type.UINT32 || t == FieldDescriptor.Type.FIXED32
        || t == FieldDescriptor.Type.UINT64 || t == FieldDescriptor.Type.FIXED64;
  }

  /** Well-known types as JSON writes them (durations bare: {@code 1.500s}); others as JSON. */
  static String message(MessageOrBuilder m) {
    Descriptor d = m.getDescriptorForType();
    switch (d.getFullName()) {
      case "google.protobuf.Duration":
        return duration(Times.secondsOf(m), Times.nanosOf(m));
      case "google.protobuf.Timestamp":
        return timestamp(Times.secondsOf(m), Times.nanosOf(m));
      case "google.protobuf.Any":
        return "{\"@type\": " + jsonQuote((String) m.getField(d.findFieldByNumber(1))) + ", …}";
      default:
        if (Wrappers.isWrapper(d)) {
          FieldDescriptor inner = d.findFieldByNumber(1);
          return element(inner, m.getField(inner));
        }
        try {
          // Any inside cannot be printed without a registry; the value is only a hint anyway
          return clip(JsonFormat.printer().omittingInsignificantWhitespace().print(m));
        } catch (Exception | StackOverflowError e) {
          return "{…}";
        }
    }
  }

  /** Integral floats without ".0" (as a person writes a bound), others as Java prints them. */
  static String number(double d, boolean isFloat) {
    if (Double.isNaN(d)) {
      return "NaN";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "Infinity" : "-Infinity";
    }
    if (d == Math.rint(d) && Math.abs(d) < 1e15) {
      return Long.toString((long) d);
    }
    return isFloat ? Float.toString((float) d) : Double.toString(d);
  }

  /** Proto3 JSON's duration: seconds with 0, 3, 6 or 9 decimals ({@code -1s}, {@code 1.500s}). */
  static String duration(long seconds, int nanos) {
    boolean negative = seconds < 0 || nanos < 0;
    StringBuilder b = new StringBuilder();
    if (negative) {
      b.append('-');
    }
    b.append(Math.abs(seconds));
    appendNanos(b, Math.abs(nanos));
    return b.append('s').toString();
  }

  /** RFC 3339 in UTC, as proto3 JSON writes a timestamp. */
  static String timestamp(long seconds, int nanos) {
    try {
      java.time.Instant i = java.time.Instant.ofEpochSecond(seconds, nanos);
      String s = java.time.format.DateTimeFormatter.ISO_LOCAL_DATE_TIME
          .format(java.time.LocalDateTime.ofEpochSecond(i.getEpochSecond(), 0,
              java.time.ZoneOffset.UTC));
      StringBuilder b = new StringBuilder(s);
      appendNanos(b, i.getNano());
      return b.append('Z').toString();
    } catch (RuntimeException e) {
      return seconds + "s since 1970 (+" + nanos + "ns)";
    }
  }

  private static void appendNanos(StringBuilder b, int nanos) {
    if (nanos == 0) {
      return;
    }
    String n = String.format("%09d", nanos);
    b.append('.').append(nanos % 1_000_000 == 0 ? n.substring(0, 3)
        : nanos % 1000 == 0 ? n.substring(0, 6) : n);
  }

  /** A string as JSON writes it, quoted. */
  static String jsonQuote(String s) {
    StringBuilder b = new StringBuilder(Math.min(s.length(), CLIP) + 2).append('"');
    // past the clip nothing more is shown: stop there, and let clip() mark the cut
    for (int i = 0; i < s.length() && b.length() <= CLIP + 1; i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        default -> {
          if (c < 0x20 || c == 0x7f) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.length() > CLIP + 1 ? b.toString() : b.append('"').toString();
  }

  /**
   * A rule's operand (a pattern, a prefix) quoted the way it is written in a .proto file: control
   * characters as {@code \x00}, {@code \n}, {@code \r}, so a pattern reads as its author wrote it.
   */
  static String quote(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    s.codePoints().forEach(c -> {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20 || c == 0x7f) {
            b.append(String.format("\\x%02x", c));
          } else {
            b.appendCodePoint(c);
          }
        }
      }
    });
    return b.append('"').toString();
  }

  /** Bytes in a rule: printable ASCII as text, the rest as {@code \xNN}. */
  static String quote(ByteString bytes) {
    StringBuilder b = new StringBuilder(bytes.size() + 2).append('"');
    for (int i = 0; i < bytes.size(); i++) {
      int c = bytes.byteAt(i) & 0xff;
      if (c == '"' || c == '\\') {
        b.append('\\').append((char) c);
      } else if (c >= 0x20 && c < 0x7f) {
        b.append((char) c);
      } else {
        b.append(String.format("\\x%02x", c));
      }
    }
    return b.append('"').toString();
  }

  /** "1 item", "2 items". */
  static String count(long n, String noun) {
    if (n == 1) {
      return n + " " + noun;
    }
    return n + " " + (noun.endsWith("y") ? noun.substring(0, noun.length() - 1) + "ies"
        : noun + "s");
  }
}
