package dev.meridian.internal.server;

import com.google.protobuf.Any;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Key material left out of what operators see (issue 20): {@code /config_dump}, {@code /clients}
 * and CSDS. Any field named like key material, in any resource and in every nested message or
 * {@code Any} (a Listener's DownstreamTlsContext, a Cluster's UpstreamTlsContext, ECDS configs), is
 * replaced: a {@code DataSource} by one whose inline string says {@link #REDACTED}, anything
 * else cleared.
 */
final class Redaction {
  static final String REDACTED = "[redacted]";
  private static final Set<String> SENSITIVE = Set.of("private_key", "password",
      "session_ticket_keys", "secret", "pkcs12");
  private static final String DATA_SOURCE = "envoy.config.core.v3.DataSource";

  private Redaction() {}

  /** {@code m} without key material; {@code m} itself when it holds none. */
  static Message redact(Message m) {
    Message.Builder b = null;
    for (Map.Entry<FieldDescriptor, Object> e : m.getAllFields().entrySet()) {
      FieldDescriptor f = e.getKey();
      if (f.getJavaType() != FieldDescriptor.JavaType.MESSAGE) {
        continue;
      }
      if (SENSITIVE.contains(f.getName())) {
        b = b == null ? m.toBuilder() : b;
        b.clearField(f);
        Descriptor t = f.getMessageType();
        if (!f.isRepeated() && t.getFullName().equals(DATA_SOURCE)) {
          Message.Builder ds = b.newBuilderForField(f);
          ds.setField(t.findFieldByName("inline_string"), REDACTED);
          b.setField(f, ds.build());
        }
        continue;
      }
      if (f.isRepeated()) {
        if (f.isMapField()) {
          continue; // maps of messages (metadata, ...) hold no TLS material
        }
        @SuppressWarnings("unchecked")
        List<Object> items = (List<Object>) e.getValue();
        for (int i = 0; i < items.size(); i++) {
          Message item = (Message) items.get(i);
          Message r = redactAny(item);
          if (r != item) {
            b = b == null ? m.toBuilder() : b;
            b.setRepeatedField(f, i, r);
          }
        }
      } else {
        Message item = (Message) e.getValue();
        Message r = redactAny(item);
        if (r != item) {
          b = b == null ? m.toBuilder() : b;
          b.setField(f, r);
        }
      }
    }
    return b == null ? m : b.build();
  }

  /** Redacts a nested message, looking inside an {@code Any} whose type is known. */
  private static Message redactAny(Message m) {
    if (!(m instanceof Any any)) {
      return redact(m);
    }
    String typeUrl = any.getTypeUrl();
    Descriptor d = EnvoyTypeRegistry.get().find(typeUrl.substring(typeUrl.lastIndexOf('/') + 1));
    if (d == null) {
      return m;
    }
    try {
      DynamicMessage inner = DynamicMessage.parseFrom(d, any.getValue());
      Message r = redact(inner);
      return r == inner ? m : Any.newBuilder().setTypeUrl(typeUrl).setValue(r.toByteString()).build();
    } catch (InvalidProtocolBufferException e) {
      return m;
    }
  }
}
