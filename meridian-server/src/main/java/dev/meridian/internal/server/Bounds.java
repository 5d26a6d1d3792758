package dev.meridian.internal.server;

import java.time.Duration;

/**
 * What one client may take of a server (issue 25, docs/reliability.md "Bounds"). The defaults
 * leave room for a fleet of 10,000+ clients on one server and stop a single abusive one.
 *
 * @param maxStreams xDS streams open at once on the server; beyond, RESOURCE_EXHAUSTED
 * @param maxStreamsPerConnection HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS of each connection
 * @param maxRequestRate requests per second a stream may send on average; it may burst ten
 *     seconds' worth, and each response it is sent allows one more request (its ACK)
 * @param maxRequestBytes largest request message (gRPC) or body (REST-JSON)
 * @param maxStreamResets RST_STREAM frames a connection may send per 10 s (rapid reset)
 * @param httpThreads threads of each HTTP port (admin, REST-JSON)
 * @param httpQueue requests of each HTTP port waiting for a thread; beyond, the connection closes
 * @param httpRequestTimeout time to send a request's headers (REST: and body); its response then
 *     has six times that to be written
 * @param maxRestLongPolls REST-JSON polls held at once; beyond, 503 with Retry-After
 * @param maxResourceNames resource names one request may carry and one stream may be subscribed
 *     to; beyond, RESOURCE_EXHAUSTED (REST-JSON: 413)
 * @param maxRequestMemory encoded bytes of requests the server holds at once, read and not yet
 *     answered (gRPC and REST-JSON); a request beyond is refused RESOURCE_EXHAUSTED (REST: 503)
 */
public record Bounds(int maxStreams, int maxStreamsPerConnection, int maxRequestRate,
    int maxRequestBytes, int maxStreamResets, int httpThreads, int httpQueue,
    Duration httpRequestTimeout, int maxRestLongPolls, int maxResourceNames,
    long maxRequestMemory) {
  public static final int DEFAULT_MAX_STREAMS = 100_000;
  public static final int DEFAULT_MAX_STREAMS_PER_CONNECTION = 1000;
  public static final int DEFAULT_MAX_REQUEST_RATE = 100;
  public static final int DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024;
  public static final int DEFAULT_MAX_STREAM_RESETS = 200;
  public static final int DEFAULT_HTTP_THREADS = 64;
  public static final int DEFAULT_HTTP_QUEUE = 256;
  public static final Duration DEFAULT_HTTP_REQUEST_TIMEOUT = Duration.ofSeconds(10);
  public static final int DEFAULT_MAX_REST_LONG_POLLS = 50_000;
  public static final int DEFAULT_MAX_RESOURCE_NAMES =
      dev.meridian.internal.protocol.XdsStream.DEFAULT_MAX_RESOURCE_NAMES;
  /**
   * A sixteenth of the heap, and room for one request of the largest size: decoded, a request
   * takes several times its encoded bytes (a Struct of node metadata the most), and the heap must
   * also hold the config, the streams and the responses.
   */
  public static final long DEFAULT_MAX_REQUEST_MEMORY =
      Math.max(DEFAULT_MAX_REQUEST_BYTES, Runtime.getRuntime().maxMemory() / 16);
  /** The window {@link #maxStreamResets} counts over. */
  public static final int RESET_WINDOW_SECONDS = 10;

  public static final Bounds DEFAULT = new Bounds(DEFAULT_MAX_STREAMS,
      DEFAULT_MAX_STREAMS_PER_CONNECTION, DEFAULT_MAX_REQUEST_RATE, DEFAULT_MAX_REQUEST_BYTES,
      DEFAULT_MAX_STREAM_RESETS, DEFAULT_HTTP_THREADS, DEFAULT_HTTP_QUEUE,
      DEFAULT_HTTP_REQUEST_TIMEOUT, DEFAULT_MAX_REST_LONG_POLLS, DEFAULT_MAX_RESOURCE_NAMES,
      DEFAULT_MAX_REQUEST_MEMORY);

  public Bounds {
    positive("max streams", maxStreams);
    positive("max streams per connection", maxStreamsPerConnection);
    positive("max request rate", maxRequestRate);
    positive("max request bytes", maxRequestBytes);
    positive("max stream resets", maxStreamResets);
    positive("HTTP threads", httpThreads);
    if (httpQueue < 0) {
      throw new IllegalArgumentException("the HTTP queue cannot be negative: " + httpQueue);
    }
    if (httpRequestTimeout == null || httpRequestTimeout.isNegative()
        || httpRequestTimeout.isZero()) {
      throw new IllegalArgumentException("the HTTP request timeout must be positive: "
          + httpRequestTimeout);
    }
    positive("max REST long polls", maxRestLongPolls);
    positive("max resource names", maxResourceNames);
    if (maxRequestMemory < maxRequestBytes) {
      throw new IllegalArgumentException("max request memory must hold one request of max request"
          + " bytes (" + maxRequestBytes + "): " + maxRequestMemory);
    }
  }

  private static void positive(String what, int v) {
    if (v < 1) {
      throw new IllegalArgumentException(what + " must be at least 1: " + v);
    }
  }

  public Bounds withMaxStreams(int v) {
    return new Bounds(v, maxStreamsPerConnection, maxRequestRate, maxRequestBytes,
        maxStreamResets, httpThreads, httpQueue, httpRequestTimeout,
        maxRestLongPolls, maxResourceNames, maxRequestMemory);
  }

  public Bounds withMaxStreamsPerConnection(int v) {
    return new Bounds(maxStreams, v, maxRequestRate, maxRequestBytes, maxStreamResets,
        httpThreads, httpQueue, httpRequestTimeout,
        maxRestLongPolls, maxResourceNames, maxRequestMemory);
  }

  public Bounds withMaxRequestRate(int v) {
    return new Bounds(maxStreams, maxStreamsPerConnection, v, maxRequestBytes, maxStreamResets,
        httpThreads, httpQueue, httpRequestTimeout,
        maxRestLongPolls, maxResourceNames, maxRequestMemory);
  }

  /** The request memory grows, if it must, to hold one request of {@code v} bytes. */
  public Bounds withMaxRequestBytes(int v) {
    return new Bounds(maxStreams, maxStreamsPerConnection, maxRequestRate, v, maxStreamResets,
        httpThreads, httpQueue, httpRequestTimeout, maxRestLongPolls, maxResourceNames,
        Math.max(maxRequestMemory, v));
  }

  public Bounds withMaxStreamResets(int v) {
    return new Bounds(maxStreams, maxStreamsPerConnection, maxRequestRate, maxRequestBytes, v,
        httpThreads, httpQueue, httpRequestTimeout,
        maxRestLongPolls, maxResourceNames, maxRequestMemory);
  }

  public Bounds withHttp(int threads, int queue, Duration requestTimeout) {
    return new Bounds(maxStreams, maxStreamsPerConnection, maxRequestRate, maxRequestBytes,
        maxStreamResets, threads, queue, requestTimeout,
        maxRestLongPolls, maxResourceNames, maxRequestMemory);
  }

  public Bounds withMaxResourceNames(int v) {
    return new Bounds(maxStreams, maxStreamsPerConnection, maxRequestRate, maxRequestBytes,
        maxStreamResets, httpThreads, httpQueue, httpRequestTimeout,
        maxRestLongPolls, v, maxRequestMemory);
  }

  public Bounds withMaxRequestMemory(long v) {
    return new Bounds(maxStreams, maxStreamsPerConnection, maxRequestRate, maxRequestBytes,
        maxStreamResets, httpThreads, httpQueue, httpRequestTimeout, maxRestLongPolls,
        maxResourceNames, v);
  }

  public Bounds withMaxRestLongPolls(int v) {
    return new Bounds(maxStreams, maxStreamsPerConnection, maxRequestRate, maxRequestBytes,
        maxStreamResets, httpThreads, httpQueue, httpRequestTimeout, v,
        maxResourceNames, maxRequestMemory);
  }
}
