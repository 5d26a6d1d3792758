package dev.meridian.client;

import com.google.protobuf.Duration;
import com.google.protobuf.Message;
import dev.meridian.internal.protocol.ResourceType;
import dev.meridian.internal.protocol.XdsResource;

/**
 * A resource as the client accepted it.
 *
 * @param resource the resource with its content version (a hash: equal content, equal version)
 * @param serverVersion the version the server gave: the response's {@code version_info} in SotW,
 *     the resource's own {@code version} in Delta
 * @param ttl the TTL the server attached, or null
 */
public record ResourceUpdate(XdsResource resource, String serverVersion, Duration ttl) {
  public ResourceType type() {
    return resource.type();
  }

  public String name() {
    return resource.name();
  }

  public Message message() {
    return resource.message();
  }
}
