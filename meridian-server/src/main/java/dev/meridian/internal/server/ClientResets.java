package dev.meridian.internal.server;

import dev.meridian.internal.protocol.LogLine;

/**
 * A client that resets a stream while a response to it is being written: grpc-java logs each
 * such reset as a WARNING "Stream Error" with a 38-line stack trace, though nothing failed on
 * this side (a client refusing a response larger than it reads, a Ctrl-C in the middle of a
 * large response). That record is replaced by one line of ours, {@code client_reset_mid_write}.
 */
final class ClientResets {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger("dev.meridian.server");

  /** grpc-java's logger of stream errors; held, since java.util.logging keeps loggers weakly. */
  private final java.util.logging.Logger handlerLog = java.util.logging.Logger.getLogger(
      "io.grpc.netty.shaded.io.grpc.netty.NettyServerHandler");

  ClientResets() {
    java.util.logging.Filter before = handlerLog.getFilter();
    handlerLog.setFilter(r -> {
      Integer stream = resetMidWrite(r.getThrown());
      if (stream != null) {
        LOG.info(LogLine.of("client_reset_mid_write").kv("http2_stream", stream)
            .kv("detail", "the client closed the stream while a response was being written; "
                + "a client refusing a response over its size limit does this").toString());
        return false;
      }
      return before == null || before.isLoggable(r);
    });
  }

  /** The HTTP/2 stream id if {@code t} is a reset by the peer during a write, else null. */
  private static Integer resetMidWrite(Throwable t) {
    if (t instanceof io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Exception.StreamException e
        && e.error() == io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Error.STREAM_CLOSED) {
      return e.streamId();
    }
    return null;
  }
}
