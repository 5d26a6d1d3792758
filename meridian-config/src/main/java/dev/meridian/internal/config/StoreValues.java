package dev.meridian.internal.config;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.meridian.internal.protocol.NodeMatcher;
import dev.meridian.internal.protocol.SecretAccess;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.XdsResource;
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
  /** Every resource {@link #entriesOf} stored, by its text. */
  private final Map<String, XdsResource> printed = new java.util.HashMap<>();
  /** The types packed in {@code Any}s so far: the printer knows only these (see {@link #printer}). */
  private final List<com.google.protobuf.Descriptors.Descriptor> types = new ArrayList<>();
  private final java.util.Set<String> known = new java.util.HashSet<>();
  private final Map<com.google.protobuf.Descriptors.Descriptor, Boolean> holdsAny =
      new java.util.HashMap<>();
  private JsonFormat.Printer printer;
  /** Finds the types packed in {@code Any}s by name. */
  private final MessageTypes typesByName = new MessageTypes();

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

  private void put(Map<String, String> out, String group, dev.meridian.internal.protocol.Snapshot s) {
    for (dev.meridian.xds.ResourceType t : dev.meridian.xds.ResourceType.all()) {
      for (XdsResource r : s.get(t).list()) {
        String text = resource(r);
        out.put(layout.resourceKey(group, r.type(), r.name()), text);
        printed.put(text, r);
      }
    }
  }

  /**
   * The resources {@link #entriesOf} has stored, by their text: a loader given them
   * ({@link ConfigLoader#ConfigLoader(Map)}) does not parse that text again.
   */
  public Map<String, XdsResource> printed() {
    return java.util.Collections.unmodifiableMap(printed);
  }

  /**
   * A resource as its stored JSON: the Resource wrapper when it has a TTL or aliases, or no name
   * of its own (an LbEndpoint, named by the wrapper: docs/config.md).
   */
  public String resource(XdsResource r) {
    com.google.protobuf.Message m = r.message();
    if (r.ttl() != null || !r.aliases().isEmpty() || !r.type().hasOwnName()) {
      Resource.Builder b = Resource.newBuilder().setResource(Any.pack(r.message()))
          .addAllAliases(r.aliases());
      if (!r.type().hasOwnName()) {
        b.setName(r.name());
      }
      if (r.ttl() != null) {
        b.setTtl(r.ttl());
      }
      m = b.build();
    }
    try {
      Any packed = Any.pack(m);
      return printer(packed).print(packed);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException(r.type().shortName() + " '" + r.name()
          + "' cannot be printed as JSON: " + e.getMessage(), e);
    }
  }

  /**
   * A printer that knows every type packed in {@code m}'s {@code Any}s (typed_config, ...),
   * found through the same resolver the loader reads with: not Envoy's whole API, whose scan
   * costs a command like {@code apply} most of a second on 2 cores. Map entries (Struct fields,
   * metadata) are sorted: the same resource is the same text whichever order its keys were
   * written in.
   */
  private JsonFormat.Printer printer(com.google.protobuf.Message m) {
    int before = known.size();
    collect(m);
    if (printer == null || known.size() != before) {
      printer = JsonFormat.printer()
          .usingTypeRegistry(JsonFormat.TypeRegistry.newBuilder().add(types).build())
          .preservingProtoFieldNames()
          .omittingInsignificantWhitespace().sortingMapKeys();
    }
    return printer;
  }

  /** Adds the types of every {@code Any} inside {@code m} (nested ones too). */
  private void collect(com.google.protobuf.Message m) {
    if (!holdsAny(m.getDescriptorForType())) {
      return;
    }
    if (m.getDescriptorForType().getFullName().equals(Any.getDescriptor().getFullName())) {
      String url = (String) m.getField(m.getDescriptorForType().findFieldByName("type_url"));
      String name = url.substring(url.lastIndexOf('/') + 1);
      com.google.protobuf.Descriptors.Descriptor d = typesByName.find(name);
      if (d == null) {
        return; // printing says which type is unknown
      }
      if (known.add(name)) {
        types.add(d);
      }
      try {
        collect(com.google.protobuf.DynamicMessage.parseFrom(d,
            (com.google.protobuf.ByteString) m.getField(
                m.getDescriptorForType().findFieldByName("value"))));
      } catch (InvalidProtocolBufferException e) {
        return; // printing reports it
      }
      return;
    }
    m.getAllFields().forEach((f, v) -> {
      if (f.getJavaType() != com.google.protobuf.Descriptors.FieldDescriptor.JavaType.MESSAGE) {
        return;
      }
      if (f.isRepeated()) {
        for (Object e : (List<?>) v) {
          collect((com.google.protobuf.Message) e);
        }
      } else {
        collect((com.google.protobuf.Message) v);
      }
    });
  }

  /** Whether a message of this type can contain an {@code Any} at any depth. */
  private boolean holdsAny(com.google.protobuf.Descriptors.Descriptor d) {
    return holdsAny.computeIfAbsent(d, t -> reachesAny(t, new java.util.HashSet<>()));
  }

  /** A walk of the type graph (types may be recursive): is {@code Any} reachable from {@code d}? */
  private static boolean reachesAny(com.google.protobuf.Descriptors.Descriptor d,
      java.util.Set<com.google.protobuf.Descriptors.Descriptor> seen) {
    if (d.getFullName().equals(Any.getDescriptor().getFullName())) {
      return true;
    }
    if (!seen.add(d)) {
      return false; // explored, or being explored, by this walk
    }
    for (com.google.protobuf.Descriptors.FieldDescriptor f : d.getFields()) {
      if (f.getJavaType() == com.google.protobuf.Descriptors.FieldDescriptor.JavaType.MESSAGE
          && reachesAny(f.getMessageType(), seen)) {
        return true;
      }
    }
    return false;
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
