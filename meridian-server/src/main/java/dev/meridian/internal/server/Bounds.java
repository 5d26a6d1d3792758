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
 * @param handshakeTimeout time a new xDS connection has to finish its TLS handshake (if any) and
 *     send the HTTP/2 preface and SETTINGS; a slower one is closed
 * @param maxConnections xDS connections open at once, counted from accept; beyond, a new one is
 *     closed at once. 0: the process's file descriptor limit less a reserve
 *     ({@link #connectionLimit})
 * @param maxConnectionsPerPeer xDS connections of one peer (its verified identity under mTLS, else
 *     its IP address); 0: half the connection limit, at least 10
 * @param maxStreamsPerPeer xDS streams of one peer; beyond, RESOURCE_EXHAUSTED. 0: half of
 *     {@code maxStreams}, at least 10
 * @param messageReceiveTimeout time from the first byte of a request message to its last; a
 *     slower message closes its connection
 * @param maxPartialBytes bytes of request messages received in part, across the server; the
 *     stream whose bytes cross it fails RESOURCE_EXHAUSTED. 0: a quarter of the JVM's maximum
 *     heap (Netty's direct memory limit is the heap's unless set)
 * @param maxPartialBytesPerConnection the same, per connection; 0: twice {@code maxRequestBytes}
 * @param maxResourceNames resource names one request may carry and one stream may be subscribed
 *     to; beyond, RESOURCE_EXHAUSTED (REST-JSON: 413)
 * @param maxRequestMemory encoded bytes of requests the server holds at once, read and not yet
 *     handled (gRPC and REST-JSON); a request beyond is refused RESOURCE_EXHAUSTED (REST: 503).
 *     0: an eighth of the JVM's maximum heap, at least {@code maxRequestBytes}
 */
public record Bounds(int maxStreams, int maxStreamsPerConnection, int maxRequestRate,
    int maxRequestBytes, int maxStreamResets, int httpThreads, int httpQueue,
    Duration httpRequestTimeout, int maxRestLongPolls,
    Duration handshakeTimeout, int maxConnections, int maxConnectionsPerPeer,
    int maxStreamsPerPeer, Duration messageReceiveTimeout, long maxPartialBytes,
    long maxPartialBytesPerConnection, int maxResourceNames, long maxRequestMemory) {
  public static final int DEFAULT_MAX_STREAMS = 100_000;
  public static final int DEFAULT_MAX_STREAMS_PER_CONNECTION = 1000;
  public static final int DEFAULT_MAX_REQUEST_RATE = 100;
  public static final int DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024;
  public static final int DEFAULT_MAX_STREAM_RESETS = 200;
  public static final int DEFAULT_HTTP_THREADS = 64;
  public static final int DEFAULT_HTTP_QUEUE = 256;
  public static final Duration DEFAULT_HTTP_REQUEST_TIMEOUT = Duration.ofSeconds(10);
  public static final int DEFAULT_MAX_REST_LONG_POLLS = 50_000;
  /** Netty's TLS handshake timeout: plaintext connections get as long for their preface. */
  public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
  /** As the HTTP request timeout: 16 MiB in 10 s is 1.6 MB/s, and xDS requests are KiBs. */
  public static final Duration DEFAULT_MESSAGE_RECEIVE_TIMEOUT = Duration.ofSeconds(10);
  /** 0 in a "max" field of connections, streams per peer or partial bytes: computed. */
  public static final int COMPUTED = 0;
  /** File descriptors kept for config files, etcd, the admin and REST ports, logs, the JVM. */
  public static final int MIN_FD_RESERVE = 256;
  /** The connection limit where the process's file descriptor limit is unknown (not Unix). */
  public static final int CONNECTIONS_WITHOUT_FD_LIMIT = 100_000;
  public static final int DEFAULT_MAX_RESOURCE_NAMES =
      dev.meridian.internal.protocol.XdsStream.DEFAULT_MAX_RESOURCE_NAMES;
  /** The window {@link #maxStreamResets} counts over. */
  public static final int RESET_WINDOW_SECONDS = 10;

  public static final Bounds DEFAULT = new Bounds(DEFAULT_MAX_STREAMS,
      DEFAULT_MAX_STREAMS_PER_CONNECTION, DEFAULT_MAX_REQUEST_RATE, DEFAULT_MAX_REQUEST_BYTES,
      DEFAULT_MAX_STREAM_RESETS, DEFAULT_HTTP_THREADS, DEFAULT_HTTP_QUEUE,
      DEFAULT_HTTP_REQUEST_TIMEOUT, DEFAULT_MAX_REST_LONG_POLLS,
      DEFAULT_HANDSHAKE_TIMEOUT, COMPUTED, COMPUTED, COMPUTED, DEFAULT_MESSAGE_RECEIVE_TIMEOUT,
      COMPUTED, COMPUTED, DEFAULT_MAX_RESOURCE_NAMES, COMPUTED);

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
    positive("the handshake timeout", handshakeTimeout);
    notNegative("max connections", maxConnections);
    notNegative("max connections per peer", maxConnectionsPerPeer);
    notNegative("max streams per peer", maxStreamsPerPeer);
    positive("the message receive timeout", messageReceiveTimeout);
    notNegative("max partial bytes", maxPartialBytes);
    notNegative("max partial bytes per connection", maxPartialBytesPerConnection);
    positive("max resource names", maxResourceNames);
    notNegative("max request memory", maxRequestMemory);
    if (maxRequestMemory != COMPUTED && maxRequestMemory < maxRequestBytes) {
      throw new IllegalArgumentException("max request memory must hold one request of max "
          + "request bytes (" + maxRequestBytes + "): " + maxRequestMemory);
    }
  }

  private static void positive(String what, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(what + " must be positive: " + d);
    }
  }

  private static void notNegative(String what, long v) {
    if (v < 0) {
      throw new IllegalArgumentException(what + " cannot be negative (0: computed): " + v);
    }
  }

  /**
   * xDS connections open at once: {@link #maxConnections}, or the file descriptor limit less a
   * reserve, so that reaching it leaves descriptors for config reloads, etcd and the admin port.
   */
  public int connectionLimit() {
    return maxConnections != COMPUTED ? maxConnections : connectionsFor(fileDescriptorLimit());
  }

  /** The limit from a file descriptor limit (-1: unknown): a tenth, at least 256, kept back. */
  static int connectionsFor(long fdLimit) {
    if (fdLimit <= 0) {
      return CONNECTIONS_WITHOUT_FD_LIMIT;
    }
    long reserve = Math.max(MIN_FD_RESERVE, fdLimit / 10);
    return (int) Math.min(Integer.MAX_VALUE, Math.max(1, fdLimit - reserve));
  }

  /** This process's limit of open files, or -1 where the JVM cannot tell. */
  static long fileDescriptorLimit() {
    if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
      return unix.getMaxFileDescriptorCount();
    }
    return -1;
  }

  /**
   * Half the connections (at least 10): one peer cannot take them all, and one address (a NAT, a
   * node's egress, a proxy) or one identity (every replica of a workload under SPIFFE) may carry
   * a large part of a fleet.
   */
  public int connectionsPerPeerLimit() {
    return maxConnectionsPerPeer != COMPUTED ? maxConnectionsPerPeer
        : halfOf(connectionLimit());
  }

  /**
   * Half the streams, at least 10 (an Envoy on per-type services holds about ten): one peer at
   * its quota leaves the other half to the others, and a peer that carries a large part of a
   * fleet (all of it behind one NAT, or one SPIFFE identity for every replica) is not refused.
   */
  public int streamsPerPeerLimit() {
    return maxStreamsPerPeer != COMPUTED ? maxStreamsPerPeer : halfOf(maxStreams);
  }

  private static int halfOf(int max) {
    return Math.min(max, Math.max(10, max / 2));
  }

  /** Partial request bytes across the server; at least one message of the largest size. */
  public long partialBytesLimit() {
    return maxPartialBytes != COMPUTED ? maxPartialBytes
        : Math.max(maxRequestBytes, Runtime.getRuntime().maxMemory() / 4);
  }

  /** Partial request bytes of one connection: two messages of the largest size. */
  public long partialBytesPerConnectionLimit() {
    return maxPartialBytesPerConnection != COMPUTED ? maxPartialBytesPerConnection
        : 2L * maxRequestBytes;
  }

  /**
   * Requests held at once, in encoded bytes: {@link #maxRequestMemory}, or an eighth of the heap
   * and room for one request of the largest size. Decoded, a request takes several times its
   * encoded bytes (a Struct of node metadata the most), and the heap must also hold the config,
   * the streams and the responses. A fleet the heap can hold stays within it even with every
   * client's ACK in flight at once and no names shared: a stream's subscription takes about five
   * times its ACK's encoded bytes.
   */
  public long requestMemoryLimit() {
    return maxRequestMemory != COMPUTED ? maxRequestMemory
        : Math.max(maxRequestBytes, Runtime.getRuntime().maxMemory() / 8);
  }

  private static void positive(String what, int v) {
    if (v < 1) {
      throw new IllegalArgumentException(what + " must be at least 1: " + v);
    }
  }

  public Bounds withMaxStreams(int v) {
    return with(b -> b.maxStreams = v);
  }

  public Bounds withMaxStreamsPerConnection(int v) {
    return with(b -> b.maxStreamsPerConnection = v);
  }

  public Bounds withMaxRequestRate(int v) {
    return with(b -> b.maxRequestRate = v);
  }

  public Bounds withMaxRequestBytes(int v) {
    return with(b -> b.maxRequestBytes = v);
  }

  public Bounds withMaxStreamResets(int v) {
    return with(b -> b.maxStreamResets = v);
  }

  public Bounds withHttp(int threads, int queue, Duration requestTimeout) {
    return with(b -> {
      b.httpThreads = threads;
      b.httpQueue = queue;
      b.httpRequestTimeout = requestTimeout;
    });
  }

  public Bounds withMaxRestLongPolls(int v) {
    return with(b -> b.maxRestLongPolls = v);
  }

  /** The time to finish the TLS handshake and send the HTTP/2 preface. */
  public Bounds withHandshakeTimeout(Duration v) {
    return with(b -> b.handshakeTimeout = v);
  }

  /** Connections in all and per peer; 0: computed ({@link #connectionLimit}). */
  public Bounds withMaxConnections(int total, int perPeer) {
    return with(b -> {
      b.maxConnections = total;
      b.maxConnectionsPerPeer = perPeer;
    });
  }

  /** Streams per peer; 0: half of {@link #maxStreams}, at least 10. */
  public Bounds withMaxStreamsPerPeer(int v) {
    return with(b -> b.maxStreamsPerPeer = v);
  }

  /** The receive deadline of a message and the partial bytes held (0: computed). */
  public Bounds withPartialMessages(Duration receiveTimeout, long perServer, long perConnection) {
    return with(b -> {
      b.messageReceiveTimeout = receiveTimeout;
      b.maxPartialBytes = perServer;
      b.maxPartialBytesPerConnection = perConnection;
    });
  }

  public Bounds withMaxResourceNames(int v) {
    return with(b -> b.maxResourceNames = v);
  }

  /** Requests held at once, in encoded bytes; 0: computed ({@link #requestMemoryLimit}). */
  public Bounds withMaxRequestMemory(long v) {
    return with(b -> b.maxRequestMemory = v);
  }

  /** A copy with {@code change} made to its fields (checked as any new Bounds). */
  private Bounds with(java.util.function.Consumer<Fields> change) {
    Fields f = new Fields(this);
    change.accept(f);
    return f.build();
  }

  /** The fields of a Bounds, to change some and build another. */
  private static final class Fields {
    int maxStreams;
    int maxStreamsPerConnection;
    int maxRequestRate;
    int maxRequestBytes;
    int maxStreamResets;
    int httpThreads;
    int httpQueue;
    Duration httpRequestTimeout;
    int maxRestLongPolls;
    Duration handshakeTimeout;
    int maxConnections;
    int maxConnectionsPerPeer;
    int maxStreamsPerPeer;
    Duration messageReceiveTimeout;
    long maxPartialBytes;
    long maxPartialBytesPerConnection;
    int maxResourceNames;
    long maxRequestMemory;

    Fields(Bounds b) {
      maxStreams = b.maxStreams;
      maxStreamsPerConnection = b.maxStreamsPerConnection;
      maxRequestRate = b.maxRequestRate;
      maxRequestBytes = b.maxRequestBytes;
      maxStreamResets = b.maxStreamResets;
      httpThreads = b.httpThreads;
      httpQueue = b.httpQueue;
      httpRequestTimeout = b.httpRequestTimeout;
      maxRestLongPolls = b.maxRestLongPolls;
      handshakeTimeout = b.handshakeTimeout;
      maxConnections = b.maxConnections;
      maxConnectionsPerPeer = b.maxConnectionsPerPeer;
      maxStreamsPerPeer = b.maxStreamsPerPeer;
      messageReceiveTimeout = b.messageReceiveTimeout;
      maxPartialBytes = b.maxPartialBytes;
      maxPartialBytesPerConnection = b.maxPartialBytesPerConnection;
      maxResourceNames = b.maxResourceNames;
      maxRequestMemory = b.maxRequestMemory;
    }

    Bounds build() {
      return new Bounds(maxStreams, maxStreamsPerConnection, maxRequestRate, maxRequestBytes,
          maxStreamResets, httpThreads, httpQueue, httpRequestTimeout, maxRestLongPolls,
          handshakeTimeout, maxConnections, maxConnectionsPerPeer, maxStreamsPerPeer,
          messageReceiveTimeout, maxPartialBytes, maxPartialBytesPerConnection, maxResourceNames,
          maxRequestMemory);
    }
  }
}
