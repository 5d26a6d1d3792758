package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Duration;
import com.google.protobuf.Message;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
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

  /**
   * Builds the resource, serializing it (deterministically) exactly once; named by the message
   * (throws for a type without its own name: use {@link #named}).
   */
  public static XdsResource of(ResourceType type, Message message, Duration ttl,
      List<String> aliases) {
    if (!type.hasOwnName()) {
      throw new IllegalArgumentException(type.typeUrl() + " has no name of its own: give one");
    }
    return named(type, type.nameOf(message), message, ttl, aliases);
  }

  /**
   * As {@link #of(ResourceType, Message, Duration, List)}, named {@code name}: the name a
   * {@code Resource} wrapper gives it, for a type without its own ({@link ResourceType#hasOwnName},
   * LEDS), or the message's own name.
   */
  public static XdsResource named(ResourceType type, String name, Message message, Duration ttl,
      List<String> aliases) {
    if (!type.messageClass().isInstance(message)) {
      throw new IllegalArgumentException(
          "expected " + type.typeUrl() + " but got " + message.getDescriptorForType().getFullName());
    }
    ByteString bytes = deterministicBytes(message);
    Any any = Any.newBuilder().setTypeUrl(type.typeUrl()).setValue(bytes).build();
    // The TTL is part of what the client receives (spec "TTL"), so a TTL change is a new version.
    String version = Versions.ofBytes(ttl == null ? bytes : bytes.concat(ttl.toByteString()));
    if (aliases.isEmpty() && type == ResourceType.VIRTUAL_HOST) {
      aliases = vhdsAliases(name, (io.envoyproxy.envoy.config.route.v3.VirtualHost) message);
    }
    return new XdsResource(type, name, message, any, version, ttl, aliases);
  }

  /**
   * VHDS names a virtual host {@code <route config name>/<virtual host name>} and clients subscribe
   * by the alias {@code <route config name>/<domain>}: one alias per domain.
   */
  private static List<String> vhdsAliases(String name, io.envoyproxy.envoy.config.route.v3.VirtualHost vh) {
    int slash = name.lastIndexOf('/');
    if (slash <= 0) {
      return List.of();
    }
    String routeConfig = name.substring(0, slash);
    return vh.getDomainsList().stream().map(d -> routeConfig + "/" + d).toList();
  }

  public static XdsResource of(ResourceType type, Message message) {
    return of(type, message, null, List.of());
  }

  /** {@link #named(ResourceType, String, Message, Duration, List)} without TTL or aliases. */
  public static XdsResource named(ResourceType type, String name, Message message) {
    return named(type, name, message, null, List.of());
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

  private volatile Resource deltaResource;
  private volatile Resource deltaResourceNoTtl;
  private volatile Any sotwTtlAny;
  private volatile Resource heartbeat;

  /**
   * The resource as Incremental xDS (and TTL-wrapped SotW) carries it: name, version, aliases,
   * TTL and the shared {@link Any}. Built once; the body's bytes are not re-encoded.
   */
  public Resource wrapped() {
    Resource r = deltaResource;
    if (r == null) {
      Resource.Builder b = Resource.newBuilder().setName(name).setVersion(version).setResource(any)
          .addAllAliases(aliases);
      if (ttl != null) {
        b.setTtl(ttl);
      }
      deltaResource = r = b.build();
    }
    return r;
  }

  /** {@link #wrapped()} for a client that does not support TTLs: the same, without the TTL. */
  public Resource wrapped(boolean withTtl) {
    if (withTtl || ttl == null) {
      return wrapped();
    }
    Resource r = deltaResourceNoTtl;
    if (r == null) {
      deltaResourceNoTtl = r = wrapped().toBuilder().clearTtl().build();
    }
    return r;
  }

  /**
   * What a SotW response carries: the plain resource, or (spec "TTL", for clients with the
   * resource-in-SotW and TTL features) the resource wrapped in a {@link Resource} with its TTL.
   */
  public Any sotwAny(boolean wrapTtl) {
    if (!wrapTtl || ttl == null) {
      return any;
    }
    Any a = sotwTtlAny;
    if (a == null) {
      sotwTtlAny = a = Any.pack(wrapped());
    }
    return a;
  }

  /** Spec "TTL": a heartbeat is a Resource with name, current version and TTL, and no body. */
  public Resource heartbeat() {
    Resource h = heartbeat;
    if (h == null) {
      Resource.Builder b = Resource.newBuilder().setName(name).setVersion(version);
      if (ttl != null) {
        b.setTtl(ttl);
      }
      heartbeat = h = b.build();
    }
    return h;
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
