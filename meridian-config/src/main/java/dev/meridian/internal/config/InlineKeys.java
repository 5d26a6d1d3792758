package dev.meridian.internal.config;

import com.google.protobuf.Any;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.internal.protocol.TypeResolver;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.XdsResource;
import dev.meridian.xds.ResourceType;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Key material written into a resource that is not a Secret: a {@code DataSource} with {@code
 * inline_bytes} or {@code inline_string} in a field that holds keys (Envoy marks them {@code
 * udpa.annotations.sensitive}: a TlsCertificate's private_key, pkcs12 and password, session ticket
 * keys, generic secrets, ...), anywhere in the resource, inside {@code Any}s too (a Cluster's
 * UpstreamTlsContext, a Listener's DownstreamTlsContext). Such a resource goes to every stream
 * placed in its group, identity or not; only Secrets (SDS) are sent by identity.
 */
public final class InlineKeys {
  private static final String DATA_SOURCE = "envoy.config.core.v3.DataSource";
  private static final String ANY = "google.protobuf.Any";
  /** Field number of {@code udpa.annotations.sensitive}, for options read without the extension. */
  private static final int SENSITIVE = 76569463;
  /** Key-holding field names, should a field lack Envoy's marking. */
  private static final Set<String> NAMES = Set.of("private_key", "pkcs12", "password", "secret",
      "secrets", "keys", "session_ticket_keys");

  private InlineKeys() {}

  /** One resource holding inline key material: where, as field paths from the resource. */
  public record Found(ResourceType type, String name, List<String> groups, List<String> paths) {
    /** A line for logs and {@code meridian validate}, pointing to SDS. */
    public String message(boolean mtls) {
      String what = type.defaultInstance().getDescriptorForType().getName() + " '" + name + "'";
      return (groups.size() == 1 ? "group '" + groups.get(0) + "'" : "groups '"
          + String.join("', '", groups) + "'") + ": " + what + " inlines key material at "
          + String.join(", ", paths) + (mtls
              ? ": under --tls-client-ca key material goes only in Secrets, sent by identity; "
              : ": it is sent to every client placed in the group, whatever its identity; ")
          + "put it in a Secret and reference it by SDS (sds_config / *_sds_secret_config(s))";
    }
  }

  /**
   * What the last search found in each resource, by identity. A reload keeps the identity of every
   * resource it did not change, so a search with the memo of the one before walks only the
   * resources that changed: all 20,000 of a large config cost a reload ~100 ms, one changed
   * endpoint set a few microseconds. Holds the last search's resources only.
   */
  public static final class Memo {
    private Map<XdsResource, List<String>> last = new IdentityHashMap<>();
    /** The types packed in Anys, found one by one: not Envoy's whole API at a start. */
    private final TypeResolver types = new TypeResolver(EnvoyTypeRegistry::get);
  }

  /** Every resource of {@code config} (each once, with the groups that hold it). */
  public static List<Found> find(ServedConfig config) {
    return find(config, new Memo());
  }

  /** As {@link #find(ServedConfig)}, walking only the resources {@code memo} has not seen. */
  public static List<Found> find(ServedConfig config, Memo memo) {
    synchronized (memo) {
      return find(config, memo.last, memo.last = new IdentityHashMap<>(), memo.types);
    }
  }

  private static List<Found> find(ServedConfig config, Map<XdsResource, List<String>> seen,
      Map<XdsResource, List<String>> now, TypeResolver types) {
    Map<XdsResource, List<String>> groupsOf = new IdentityHashMap<>();
    Map<XdsResource, List<String>> pathsOf = new LinkedHashMap<>();
    for (String group : config.groupNames()) {
      for (ResourceType type : ResourceType.all()) {
        if (type == ResourceType.SECRET) {
          continue;
        }
        for (XdsResource r : config.snapshot(group).get(type).list()) {
          List<String> groups = groupsOf.get(r);
          if (groups != null) {
            groups.add(group);
            continue;
          }
          groupsOf.put(r, new ArrayList<>(List.of(group)));
          List<String> paths = seen.get(r);
          if (paths == null) {
            paths = paths(r.message(), types);
          }
          now.put(r, paths);
          if (!paths.isEmpty()) {
            pathsOf.put(r, paths);
          }
        }
      }
    }
    List<Found> found = new ArrayList<>();
    pathsOf.forEach((r, paths) -> found.add(new Found(r.type(), r.name(),
        List.copyOf(groupsOf.get(r)), paths)));
    return found;
  }

  /** The field paths in {@code m} where key material is inlined. */
  static List<String> paths(Message m, TypeResolver types) {
    List<String> out = new ArrayList<>();
    walk(m, "", out, types);
    return out;
  }

  private static void walk(Message m, String path, List<String> out, TypeResolver types) {
    for (Map.Entry<FieldDescriptor, Object> e : m.getAllFields().entrySet()) {
      FieldDescriptor f = e.getKey();
      if (f.getJavaType() != FieldDescriptor.JavaType.MESSAGE) {
        continue;
      }
      String p = path.isEmpty() ? f.getName() : path + "." + f.getName();
      if (f.isMapField()) {
        FieldDescriptor key = f.getMessageType().findFieldByName("key");
        FieldDescriptor value = f.getMessageType().findFieldByName("value");
        for (Object entry : (List<?>) e.getValue()) {
          Message kv = (Message) entry;
          if (value.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
            visit((Message) kv.getField(value), p + "[\"" + kv.getField(key) + "\"]",
                holdsKeys(f, value.getMessageType()), out, types);
          }
        }
      } else if (f.isRepeated()) {
        List<?> items = (List<?>) e.getValue();
        for (int i = 0; i < items.size(); i++) {
          visit((Message) items.get(i), p + "[" + i + "]", holdsKeys(f, f.getMessageType()), out,
              types);
        }
      } else {
        visit((Message) e.getValue(), p, holdsKeys(f, f.getMessageType()), out, types);
      }
    }
  }

  private static void visit(Message v, String path, boolean keys, List<String> out,
      TypeResolver types) {
    Descriptor d = v.getDescriptorForType();
    if (keys) {
      for (String inline : new String[] {"inline_bytes", "inline_string"}) {
        FieldDescriptor f = d.findFieldByName(inline);
        if (f != null && v.hasField(f)) {
          out.add(path + "." + inline);
        }
      }
      return;
    }
    if (d.getFullName().equals(ANY)) {
      Message inner = unpack(v, types);
      if (inner != null) {
        walk(inner, path, out, types);
      }
      return;
    }
    walk(v, path, out, types);
  }

  /** Whether {@code f}, of type {@code type}, holds key material in a DataSource. */
  private static boolean holdsKeys(FieldDescriptor f, Descriptor type) {
    if (!type.getFullName().equals(DATA_SOURCE)) {
      return false;
    }
    com.google.protobuf.DescriptorProtos.FieldOptions o = f.getOptions();
    return NAMES.contains(f.getName())
        || (o.hasExtension(udpa.annotations.Sensitive.sensitive)
            && o.getExtension(udpa.annotations.Sensitive.sensitive))
        || o.getUnknownFields().hasField(SENSITIVE);
  }

  /** The message an {@code Any} packs, through the registry of Envoy's types; null if unknown. */
  private static Message unpack(Message any, TypeResolver types) {
    String typeUrl;
    com.google.protobuf.ByteString value;
    if (any instanceof Any a) {
      typeUrl = a.getTypeUrl();
      value = a.getValue();
    } else {
      Descriptor d = any.getDescriptorForType();
      typeUrl = (String) any.getField(d.findFieldByName("type_url"));
      value = (com.google.protobuf.ByteString) any.getField(d.findFieldByName("value"));
    }
    Descriptor d = types.find(typeUrl.substring(typeUrl.lastIndexOf('/') + 1));
    if (d == null) {
      return null;
    }
    try {
      return DynamicMessage.parseFrom(d, value);
    } catch (InvalidProtocolBufferException e) {
      return null;
    }
  }
}
