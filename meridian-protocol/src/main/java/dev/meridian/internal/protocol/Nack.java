package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import java.time.Instant;

/**
 * A rejected response as the client reported it (spec "ACK/NACK and resource instance versioning").
 *
 * @param rejectedVersion the version_info of the response the client rejected
 * @param keptVersion the version the client reports it still runs (its last accepted)
 * @param message the client's error_detail message, bounded by {@link #MAX_MESSAGE}
 */
public record Nack(String nodeId, ResourceType type, String rejectedVersion, String keptVersion,
    String nonce, int code, String message, Instant at) {

  /** Clients may send arbitrarily long details; we keep a bounded prefix. */
  public static final int MAX_MESSAGE = 4096;

  public static String bound(String message) {
    return message.length() <= MAX_MESSAGE ? message
        : message.substring(0, MAX_MESSAGE) + "... (" + (message.length() - MAX_MESSAGE)
            + " more characters)";
  }
}
