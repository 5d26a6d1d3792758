package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.protocol.ResourceType;
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
  }
}
