package dev.meridian.internal.server;

import com.google.protobuf.Message;
import dev.meridian.internal.protocol.Nack;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;

/**
 * What happens on xDS streams, reported to the embedding application (its callbacks). Called on the
 * stream's serial executor, on the push path: an implementation must only hand the event on.
 * Events of one stream come in order: opened (at its first request, when the node is known),
 * then requests, responses, ACKs and NACKs, then closed. A stream that ends before its first
 * request reports nothing.
 */
public interface StreamEvents {
  StreamEvents NONE = new StreamEvents() {};

  default void opened(StreamInfo stream, Node node, String group) {}

  default void request(StreamInfo stream, Node node, String group, Message request) {}

  default void sent(StreamInfo stream, Node node, String group, ResourceType type,
      Message response) {}

  default void acked(StreamInfo stream, Node node, String group, ResourceType type,
      String version) {}

  default void nacked(StreamInfo stream, Node node, String group, Nack nack) {}

  default void closed(StreamInfo stream, Node node, String group, String reason) {}
}
