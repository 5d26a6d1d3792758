package dev.meridian.internal.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** jetcd clients for a target, and the small conversions every caller needs. */
final class EtcdClients {
  /** How long one request to etcd may take before the store counts as unreachable. */
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);

  /** The largest read or watch response accepted from etcd. */
  static final int MAX_MESSAGE_BYTES = 512 * 1024 * 1024;

  private EtcdClients() {}

  static Client connect(EtcdTarget target) throws IOException {
    ClientBuilder b = Client.builder().endpoints(target.endpoints().toArray(String[]::new))
        .connectTimeout(Duration.ofSeconds(3))
        .keepaliveTime(Duration.ofSeconds(10))
        .keepaliveTimeout(Duration.ofSeconds(5))
        .keepaliveWithoutCalls(true)
        // A whole config in one read, and a large transaction in one watch response: gRPC's
        // default 4 MiB is some 8,000 clusters with their endpoints.
        .maxInboundMessageSize(MAX_MESSAGE_BYTES)
        // jetcd retries failed requests itself; bound it so that callers see an outage.
        .retryMaxDuration(Duration.ofSeconds(3));
    if (target.secure()) {
      EtcdTarget.Tls tls = target.tls();
      SslContextBuilder ssl = GrpcSslContexts.forClient();
      try {
        if (tls != null && tls.ca() != null) {
          ssl.trustManager(tls.ca().toFile());
        }
        if (tls != null && tls.cert() != null) {
          ssl.keyManager(tls.cert().toFile(), tls.key().toFile());
        }
        b.sslContext(ssl.build());
      } catch (IOException | IllegalArgumentException e) {
        throw new IOException("cannot use the etcd TLS files (--etcd-ca, --etcd-cert, "
            + "--etcd-key): " + e.getMessage(), e);
      }
    }
    return b.build();
  }

  static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  static String string(ByteSequence b) {
    return b.toString(StandardCharsets.UTF_8);
  }

  /** The cause a future failed with, for a message: its deepest message. */
  static String why(Throwable t) {
    Throwable c = t;
    while ((c instanceof java.util.concurrent.ExecutionException
        || c instanceof java.util.concurrent.CompletionException) && c.getCause() != null) {
      c = c.getCause();
    }
    String m = c.getMessage();
    return m == null ? c.getClass().getSimpleName() : m;
  }
}
