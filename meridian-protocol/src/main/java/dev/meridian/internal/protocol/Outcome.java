package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import com.google.protobuf.Message;

/** What the core asks the transport to do after an event. Transports only carry these out. */
public sealed interface Outcome {

  /** Send this response (a DiscoveryResponse or DeltaDiscoveryResponse) on the stream. */
  record Send(ResourceType type, Message response) implements Outcome {}

  /** The client accepted a response. */
  record Ack(ResourceType type, String version, String nonce) implements Outcome {}

  /** The client rejected a response; record and log it. Nothing is resent because of it. */
  record Nacked(Nack nack) implements Outcome {}

  /** A request that the protocol says to ignore (stale nonce, ...), with why, for debug logs. */
  record Ignored(ResourceType type, String reason) implements Outcome {}

  /**
   * A resource this stream asks for exists but is withheld from it (issue 20: a Secret its identity
   * may not have); for the refusal's log line and metric. Said once per resource.
   */
  record Withheld(ResourceType type, String name, String reason) implements Outcome {}

  /** End the stream with this status; other streams are unaffected. */
  record Close(CloseCode code, String message) implements Outcome {}

  /** Transport-neutral status codes for closing a stream (mapped to gRPC codes by the server). */
  enum CloseCode {
    INVALID_ARGUMENT,
    PERMISSION_DENIED,
    UNIMPLEMENTED,
    INTERNAL,
    /** The client asks for more than the server allows (resource names per request or stream). */
    RESOURCE_EXHAUSTED
  }
}
