package dev.meridian.server;

import io.envoyproxy.envoy.config.core.v3.Node;
import java.time.Instant;

/**
 * One xDS stream as a callback sees it, at the moment of the event.
 *
 * @param id unique within this Meridian, in connection order
 * @param node the node of the stream's first request
 * @param group the group {@link NodeGrouping} placed it in (null when it was refused)
 * @param peer the client's address as {@code host:port}, or {@code "unknown"}
 * @param identity its verified client certificate's URI SAN (a SPIFFE ID, with {@code ://}), else
 *     its first DNS SAN if that is a host name; null: none
 * @param delta whether it is an Incremental (Delta) stream, else State of the World
 * @param service {@code "ads"} on the aggregated service, else the per-type service's
 *     abbreviation ({@code "CDS"}, {@code "EDS"}, ...)
 * @param connectedSince when the stream opened
 */
public record StreamView(long id, Node node, String group, String peer, String identity,
    boolean delta, String service, Instant connectedSince) {}
