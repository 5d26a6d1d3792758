package dev.meridian.config;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.meridian.protocol.EnvoyTypeRegistry;
import dev.meridian.protocol.NodeMatcher;
import dev.meridian.protocol.SecretAccess;
import dev.meridian.protocol.ServedConfig;
import dev.meridian.protocol.XdsResource;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The values a config is stored as ({@link StoreLayout}): one canonical JSON text per resource
 * (proto3 JSON with the proto field names, map keys sorted, no insignificant whitespace), so
 * equal resources are
 * equal texts, whoever wrote them and in whatever format. {@code meridian apply} diffs and writes
 * these; {@code meridian export} prints them back in the file format.
 */
public final class StoreValues {
  private final StoreLayout layout;
  private final JsonFormat.Printer printer =
      // Map entries (Struct fields, metadata) sorted: the same resource is the same text
      // whichever order its keys were written in.
      EnvoyTypeRegistry.get().printer().omittingInsignificantWhitespace().sortingMapKeys();

  public StoreValues(StoreLayout layout) {
    this.layout = layout;
  }

  /** Every key and value that stores {@code config}. */
  public Map<String, String> entriesOf(ServedConfig config) {
    Map<String, String> out = new TreeMap<>();
    put(out, ServedConfig.DEFAULT_GROUP, config.defaults());
    int order = 0;
    for (ServedConfig.Group g : config.groups()) {
      out.put(layout.groupKey(g.name()), group(g.matcher(), order++));
      put(out, g.name(), g.snapshot());
    }
    if (!config.secretAccess().rules().isEmpty()) {
      out.put(layout.secretAccessKey(), secretAccess(config.secretAccess()));
    }
    return out;
  }

  private void put(Map<String, String> out, String group, dev.meridian.protocol.Snapshot s) {
    for (dev.meridian.protocol.ResourceType t : dev.meridian.protocol.ResourceType.all()) {
      for (XdsResource r : s.get(t).list()) {
        out.put(layout.resourceKey(group, r.type(), r.name()), resource(r));
      }
    }
  }

  /** A resource as its stored JSON: the Resource wrapper when it has a TTL or aliases. */
  public String resource(XdsResource r) {
    com.google.protobuf.Message m = r.message();
    if (r.ttl() != null || !r.aliases().isEmpty()) {
      Resource.Builder b = Resource.newBuilder().setResource(Any.pack(r.message()))
          .addAllAliases(r.aliases());
      if (r.ttl() != null) {
        b.setTtl(r.ttl());
      }
      m = b.build();
    }
    try {
      return printer.print(Any.pack(m));
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException(r.type().shortName() + " '" + r.name()
          + "' cannot be printed as JSON: " + e.getMessage(), e);
    }
  }

  /** A group definition: {@code {"match": {...}, "order": N}}. */
  public static String group(NodeMatcher m, int order) {
    List<String> match = new ArrayList<>();
    if (m.nodeIdGlob() != null) {
      match.add(quote("node_id") + ":" + quote(m.nodeIdGlob()));
    }
    if (m.nodeClusterGlob() != null) {
      match.add(quote("node_cluster") + ":" + quote(m.nodeClusterGlob()));
    }
    if (m.identityGlob() != null) {
      match.add(quote("identity") + ":" + quote(m.identityGlob()));
    }
    return "{\"match\":{" + String.join(",", match) + "},\"order\":" + order + "}";
  }

  /** The secret_access rules as a JSON list. */
  public static String secretAccess(SecretAccess access) {
    List<String> rules = new ArrayList<>();
    for (SecretAccess.Rule r : access.rules()) {
      rules.add("{\"secrets\":" + quote(r.secrets()) + ",\"identities\":["
          + String.join(",", r.identities().stream().map(StoreValues::quote).toList()) + "]}");
    }
    return "[" + String.join(",", rules) + "]";
  }

  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
