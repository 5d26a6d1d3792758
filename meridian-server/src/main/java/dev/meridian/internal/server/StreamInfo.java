package dev.meridian.internal.server;

import dev.meridian.xds.ResourceType;
import java.time.Instant;

/**
 * What is known about a connected xDS stream from its start: fixed for its lifetime.
 *
 * @param id unique within this server process, in connection order
 * @param variant {@link #SOTW} or {@link #DELTA} (spec "Variants of the xDS Transport Protocol")
 * @param service {@link #ADS} on the aggregated service, else the per-type service's type
 *     abbreviation ({@code CDS}, {@code EDS}, ...)
 * @param method the full gRPC method name
 * @param peer the client's address as {@code host:port}, or {@code "unknown"}
 * @param identity the identity of the client's verified certificate (a SPIFFE ID, else its first
 *     DNS SAN), or null: plaintext, or no such SAN (issue 20)
 */
public record StreamInfo(long id, String variant, String service, String method, String peer,
    Instant connectedSince, String identity) {
  public static final String SOTW = "sotw";
  public static final String DELTA = "delta";
  public static final String ADS = "ads";

  /** The service label for a stream: ADS when {@code perType} is null. */
  public static String service(ResourceType perType) {
    return perType == null ? ADS : perType.abbreviation();
  }

  public boolean ads() {
    return ADS.equals(service);
  }
}
