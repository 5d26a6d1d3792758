package dev.meridian.internal.server;

import dev.meridian.internal.protocol.SotwStream;
import dev.meridian.internal.protocol.XdsStream;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.util.List;

/**
 * A point-in-time, immutable view of one connected stream, taken on the stream's own serial executor.
 * Both the SotW and the Delta handlers produce it; admin HTTP and CSDS only read it.
 *
 * @param node null until the stream's first request (spec "Versioning and Node Identifier")
 * @param group the config group serving this node, null with {@code node}
 * @param types one entry per resource type the client has requested on this stream
 */
public record ClientStatus(StreamInfo stream, Node node, String group,
    List<XdsStream.TypeStatus> types) {

  public ClientStatus {
    types = List.copyOf(types);
  }
}
