package dev.meridian.internal.server;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.type.matcher.v3.NodeMatcher;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.envoyproxy.envoy.type.matcher.v3.StructMatcher;
import io.envoyproxy.envoy.type.matcher.v3.ValueMatcher;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Evaluates CSDS {@code node_matchers} (envoy.type.matcher.v3.NodeMatcher): the list is OR-ed (an
 * empty list matches every node); within one matcher, {@code node_id} and every
 * {@code node_metadatas} entry must match. Matchers Meridian cannot evaluate (custom string matchers,
 * list matchers, double ranges) are refused with {@link IllegalArgumentException} rather than
 * silently matching nothing.
 */
final class CsdsNodeMatchers {
  private CsdsNodeMatchers() {}

  static boolean matches(List<NodeMatcher> matchers, Node node) {
    if (matchers.isEmpty()) {
      return true;
    }
    for (NodeMatcher m : matchers) {
      if (matches(m, node)) {
        return true;
      }
    }
    return false;
  }

  /** Throws IllegalArgumentException for a matcher this server cannot evaluate. */
  static void validate(List<NodeMatcher> matchers) {
    Node probe = Node.getDefaultInstance();
    for (NodeMatcher m : matchers) {
      matches(m, probe); // evaluates every part, so unsupported parts throw
    }
  }

  private static boolean matches(NodeMatcher m, Node node) {
    boolean ok = !m.hasNodeId() || matches(m.getNodeId(), node.getId());
    for (StructMatcher sm : m.getNodeMetadatasList()) {
      ok &= matches(sm, node.getMetadata());
    }
    return ok;
  }

  static boolean matches(StringMatcher m, String s) {
    boolean ic = m.getIgnoreCase();
    String v = ic ? s.toLowerCase(Locale.ROOT) : s;
    return switch (m.getMatchPatternCase()) {
      case EXACT -> v.equals(ic ? m.getExact().toLowerCase(Locale.ROOT) : m.getExact());
      case PREFIX -> v.startsWith(ic ? m.getPrefix().toLowerCase(Locale.ROOT) : m.getPrefix());
      case SUFFIX -> v.endsWith(ic ? m.getSuffix().toLowerCase(Locale.ROOT) : m.getSuffix());
      case CONTAINS -> v.contains(ic ? m.getContains().toLowerCase(Locale.ROOT) : m.getContains());
      // safe_regex matches the whole string, as in Envoy.
      case SAFE_REGEX -> Pattern.compile(m.getSafeRegex().getRegex()).matcher(s).matches();
      default -> throw new IllegalArgumentException(
          "unsupported string matcher " + m.getMatchPatternCase());
    };
  }

  private static boolean matches(StructMatcher m, Struct metadata) {
    if (m.getPathCount() == 0) {
      throw new IllegalArgumentException("node_metadatas matcher without a path");
    }
    Value v = null;
    Struct at = metadata;
    for (StructMatcher.PathSegment seg : m.getPathList()) {
      if (at == null) {
        v = null;
        break;
      }
      v = at.getFieldsMap().get(seg.getKey());
      at = v != null && v.hasStructValue() ? v.getStructValue() : null;
    }
    return matches(m.getValue(), v);
  }

  private static boolean matches(ValueMatcher m, Value v) {
    return switch (m.getMatchPatternCase()) {
      case PRESENT_MATCH -> (v != null) == m.getPresentMatch();
      case NULL_MATCH -> v == null || v.hasNullValue();
      case BOOL_MATCH -> v != null && v.hasBoolValue() && v.getBoolValue() == m.getBoolMatch();
      case STRING_MATCH -> matches(m.getStringMatch(), v != null && v.hasStringValue()
          ? v.getStringValue() : null, v != null && v.hasStringValue());
      case DOUBLE_MATCH -> {
        if (!m.getDoubleMatch().hasExact() && m.getDoubleMatch().hasRange()) {
          var r = m.getDoubleMatch().getRange(); // [start, end)
          yield v != null && v.hasNumberValue() && v.getNumberValue() >= r.getStart()
              && v.getNumberValue() < r.getEnd();
        }
        yield v != null && v.hasNumberValue() && v.getNumberValue() == m.getDoubleMatch().getExact();
      }
      case OR_MATCH -> {
        boolean any = false;
        for (ValueMatcher vm : m.getOrMatch().getValueMatchersList()) {
          any |= matches(vm, v);
        }
        yield any;
      }
      default -> throw new IllegalArgumentException(
          "unsupported metadata value matcher " + m.getMatchPatternCase());
    };
  }

  private static boolean matches(StringMatcher m, String s, boolean present) {
    boolean r = matches(m, present ? s : "");
    return present && r;
  }
}
