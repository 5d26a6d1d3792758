package dev.meridian.protocol;

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

  /** End the stream with this status; other streams are unaffected. */
  record Close(CloseCode code, String message) implements Outcome {}

  /** Transport-neutral status codes for closing a stream (mapped to gRPC codes by the server). */
  enum CloseCode {
    INVALID_ARGUMENT,
    UNIMPLEMENTED,
    INTERNAL
  }
}
