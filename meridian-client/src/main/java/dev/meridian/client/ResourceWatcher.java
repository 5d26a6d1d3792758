package dev.meridian.client;

import dev.meridian.xds.ResourceType;

/**
 * Told about one resource (or, for a wildcard watch, every resource of a type). Callbacks run
 * serialized on the client's callback executor, never on a gRPC thread.
 */
public interface ResourceWatcher {
  /** The resource is new or its content changed. */
  void onChanged(ResourceUpdate update);

  /**
   * The resource does not exist: the does-not-exist timer fired, the server deleted it (SotW
   * Listener/Cluster absence, Delta {@code removed_resources}) or its TTL expired.
   */
  void onDoesNotExist(ResourceType type, String name);

  /** Something went wrong; the last good value (if any) stays in place. */
  void onError(XdsError error);

  /**
   * A response for this watch's type was processed (after its onChanged/onDoesNotExist callbacks),
   * with the type's version now accepted. Wildcard watchers learn from it that they have the whole
   * set, even when it is empty.
   */
  default void onResponseProcessed(ResourceType type, String acceptedVersion, boolean nacked) {}
}
