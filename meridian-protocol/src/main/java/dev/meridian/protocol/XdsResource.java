package dev.meridian.protocol;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Duration;
import com.google.protobuf.Message;
import java.io.IOException;
import java.util.List;
import java.util.Objects;

/**
 * One named resource at one version. The {@link Any} is built once per version and shared by every
 * response that carries it, however many clients receive it.
 */
public final class XdsResource {
  private final ResourceType type;
  private final String name;
  private final String version;
  private final Message message;
  private final Any any;
  private final Duration ttl; // null: no TTL
  private final List<String> aliases;

  private XdsResource(ResourceType type, String name, Message message, Any any, String version,
      Duration ttl, List<String> aliases) {
    this.type = type;
    this.name = name;
    this.message = message;
    this.any = any;
    this.version = version;
    this.ttl = ttl;
    this.aliases = List.copyOf(aliases);
  }

  /** Builds the resource, serializing it (deterministically) exactly once. */
  public static XdsResource of(ResourceType type, Message message, Duration ttl,
      List<String> aliases) {
    if (!type.messageClass().isInstance(message)) {
      throw new IllegalArgumentException(
          "expected " + type.typeUrl() + " but got " + message.getDescriptorForType().getFullName());
    }
    ByteString bytes = deterministicBytes(message);
    SerializationCounter.increment();
    Any any = Any.newBuilder().setTypeUrl(type.typeUrl()).setValue(bytes).build();
    // The TTL is part of what the client receives (spec "TTL"), so a TTL change is a new version.
    String version = Versions.ofBytes(ttl == null ? bytes : bytes.concat(ttl.toByteString()));
    return new XdsResource(type, type.nameOf(message), message, any, version, ttl, aliases);
  }

  public static XdsResource of(ResourceType type, Message message) {
    return of(type, message, null, List.of());
  }

  static ByteString deterministicBytes(Message message) {
    try {
      byte[] out = new byte[message.getSerializedSize()];
      CodedOutputStream cos = CodedOutputStream.newInstance(out);
      cos.useDeterministicSerialization();
      message.writeTo(cos);
      cos.checkNoSpaceLeft();
      return ByteString.copyFrom(out);
    } catch (IOException e) {
      throw new IllegalStateException("serializing to a byte array cannot fail", e);
    }
  }

  public ResourceType type() {
    return type;
  }

  public String name() {
    return name;
  }

  public String version() {
    return version;
  }

  public Message message() {
    return message;
  }

  public Any any() {
    return any;
  }

  /** The TTL configured for this resource, or null. */
  public Duration ttl() {
    return ttl;
  }

  public List<String> aliases() {
    return aliases;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof XdsResource r && r.type == type && r.name.equals(name)
        && r.version.equals(version);
  }

  @Override
  public int hashCode() {
    return Objects.hash(type, name, version);
  }

  @Override
  public String toString() {
    return type.abbreviation() + " " + name + "@" + version;
  }
}
