package dev.meridian.client;

import com.google.protobuf.Duration;
import com.google.protobuf.Message;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.XdsResource;
import java.util.Objects;

/** A resource as the client accepted it. Immutable. */
public final class ResourceUpdate {
  private final XdsResource resource;
  private final String serverVersion;
  private final Duration ttl;

  ResourceUpdate(XdsResource resource, String serverVersion, Duration ttl) {
    this.resource = resource;
    this.serverVersion = serverVersion;
    this.ttl = ttl;
  }

  XdsResource resource() {
    return resource;
  }

  public ResourceType type() {
    return resource.type();
  }

  public String name() {
    return resource.name();
  }

  public Message message() {
    return resource.message();
  }

  /** The resource's content version (a hash: equal content, equal version). */
  public String version() {
    return resource.version();
  }

  /**
   * The version the server gave: the response's {@code version_info} in SotW, the resource's own
   * {@code version} in Delta.
   */
  public String serverVersion() {
    return serverVersion;
  }

  /** The TTL the server attached, or null. */
  public Duration ttl() {
    return ttl;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ResourceUpdate u && resource.equals(u.resource)
        && Objects.equals(serverVersion, u.serverVersion) && Objects.equals(ttl, u.ttl);
  }

  @Override
  public int hashCode() {
    return Objects.hash(resource, serverVersion, ttl);
  }

  @Override
  public String toString() {
    return "ResourceUpdate[" + type().abbreviation() + " " + name() + " version " + version()
        + " server version " + serverVersion + (ttl == null ? "" : " ttl " + ttl) + "]";
  }
}
