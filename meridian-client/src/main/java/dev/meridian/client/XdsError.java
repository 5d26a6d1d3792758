package dev.meridian.client;

import dev.meridian.xds.ResourceType;

/**
 * An error a watcher is told about. The last good value stays in place: an error never removes a
 * resource (only {@link ResourceWatcher#onDoesNotExist} does).
 *
 * @param resourceName the resource concerned, or null when it concerns the whole stream
 */
public record XdsError(Kind kind, ResourceType type, String resourceName, String message) {
  public enum Kind {
    /** The stream to the control plane failed or the server is unreachable. */
    UNAVAILABLE,
    /** The server sent this resource in a form we rejected (we NACKed it). */
    INVALID_RESOURCE,
    /**
     * The server reported an error for this resource instead of sending it ({@code
     * resource_errors}, xDS TP3; gRFC A88's server data error), other than NOT_FOUND (which is
     * {@link ResourceWatcher#onDoesNotExist}): e.g. PERMISSION_DENIED for a Secret the stream may
     * not have. The message starts with the status code's name ({@code PERMISSION_DENIED: ...}).
     */
    RESOURCE_ERROR,
    /**
     * A response was larger than the client reads ({@link XdsClient.Options#maxResponseBytes}):
     * its stream ended, and the client reconnects with backoff, as after any failure, in case the
     * config shrinks. The message names the response's size and the limit.
     */
    RESPONSE_TOO_LARGE
  }

  @Override
  public String toString() {
    return kind + " " + type.shortName() + (resourceName == null ? "" : " " + resourceName) + ": "
        + message;
  }
}
