package dev.meridian.client;

import io.grpc.Status;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A response larger than the client reads ({@link XdsClient.Options#maxResponseBytes}): the cause
 * of the status its stream ends with, so that the client tells it apart from a server's refusal.
 */
final class ResponseTooLarge extends RuntimeException {
  /** grpc-java's deframer's words for a message over the channel's maxInboundMessageSize. */
  private static final Pattern GRPC = Pattern.compile(
      "(?:Decompressed )?gRPC message exceeds maximum size (\\d+): (\\d+)");

  final long limit;
  final long size;

  ResponseTooLarge(long limit, long size) {
    super(null, null, false, false); // a marker: no stack trace to fill in
    this.limit = limit;
    this.size = size;
  }

  /**
   * {@code status} marked as a too-large response if it is our own deframer's refusal under
   * {@code limit}; as it was otherwise (a server may refuse a request with the same words, but
   * not under our limit, and then it is the server's error).
   */
  static Status mark(Status status, int limit) {
    if (status.getCode() != Status.Code.RESOURCE_EXHAUSTED || status.getDescription() == null) {
      return status;
    }
    Matcher m = GRPC.matcher(status.getDescription());
    if (!m.find() || Long.parseLong(m.group(1)) != limit) {
      return status;
    }
    return status.withCause(new ResponseTooLarge(limit, Long.parseLong(m.group(2))));
  }

  /** The marker {@code status} carries, or null. */
  static ResponseTooLarge of(Status status) {
    return status.getCause() instanceof ResponseTooLarge r ? r : null;
  }

  /** The watchers' message: both sizes and the server. */
  String describe(String serverUri) {
    return "a response of " + size + " bytes from " + serverUri
        + " exceeds the client's limit of " + limit + " bytes (max response bytes)";
  }
}
