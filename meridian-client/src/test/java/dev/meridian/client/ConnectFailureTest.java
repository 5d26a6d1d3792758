package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.grpc.Status;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** Issue 18 §6: a failed connection is said in words, not as `UNAVAILABLE io exception`. */
class ConnectFailureTest {
  @Test
  void aWatcherIsToldTheConnectionWasRefused() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    String target = "127.0.0.1:" + port;
    RecordingWatcher w = new RecordingWatcher();
    try (XdsClient client = XdsClient.create(Bootstrap.forServer(target,
        Node.newBuilder().setId("n").build()), XdsClient.Options.defaults())) {
      client.watchAll(ResourceType.CLUSTER, w);
      Await.until("an error", () -> {
        synchronized (w) {
          return !w.errors.isEmpty();
        }
      });
    }
    synchronized (w) {
      XdsError e = w.errors.get(0);
      assertThat(e.kind()).isEqualTo(XdsError.Kind.UNAVAILABLE);
      assertThat(e.message()).isEqualTo("connection refused to " + target);
    }
  }

  @Test
  void aStatusNotFromAFailedConnectionIsLeftToTheCaller() {
    assertThat(ConnectFailure.describe(Status.UNAVAILABLE.withDescription("server shutting down"),
        "h:1")).isNull();
    assertThat(ConnectFailure.describe(Status.UNAVAILABLE.withCause(
        new java.net.UnknownHostException("nowhere.invalid")), "nowhere.invalid:1"))
        .isEqualTo("unknown host in nowhere.invalid:1");
    assertThat(ConnectFailure.describe(Status.UNAVAILABLE.withCause(new java.io.IOException(
        "recvAddress(..) failed with error(-104): Connection reset by peer")), "h:1"))
        .isEqualTo("connection to h:1 reset by the server");
  }

  @Test
  void theHostOfATargetIsItsNameWithoutSchemeOrPort() {
    assertThat(ConnectFailure.host("127.0.0.1:18000")).isEqualTo("127.0.0.1");
    assertThat(ConnectFailure.host("localhost:18000")).isEqualTo("localhost");
    assertThat(ConnectFailure.host("dns:///xds.internal:443")).isEqualTo("xds.internal");
    assertThat(ConnectFailure.host("[::1]:18000")).isEqualTo("::1");
  }

  /** Issue 20: the alert a server sends about the client's certificate, in words. */
  @Test
  void aTlsAlertFromTheServerIsSaidInWords() {
    assertThat(ConnectFailure.describe(Status.UNAVAILABLE.withCause(new javax.net.ssl.SSLException(
        "Received fatal alert: certificate_required")), "h:1"))
        .isEqualTo("TLS handshake with h:1 failed: the server requires a client certificate and "
            + "this client has none");
    assertThat(ConnectFailure.describe(Status.UNAVAILABLE.withCause(new javax.net.ssl.SSLException(
        "error:10000418:SSL routines:OPENSSL_internal:TLSV1_ALERT_UNKNOWN_CA")), "h:1"))
        .isEqualTo("TLS handshake with h:1 failed: the server refused this client's certificate "
            + "(not issued by a CA it trusts, or not for a client)");
    assertThat(ConnectFailure.describe(Status.UNAVAILABLE.withCause(new javax.net.ssl.SSLException(
        "Received fatal alert: certificate_expired")), "h:1"))
        .isEqualTo("TLS handshake with h:1 failed: the server refused this client's certificate: "
            + "it has expired");
  }
}
