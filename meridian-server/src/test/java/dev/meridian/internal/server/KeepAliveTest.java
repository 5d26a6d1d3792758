package dev.meridian.internal.server;

import static dev.meridian.xds.ResourceType.CLUSTER;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The keepalive policy accepts grpc-java's keepalive pings (every 10s, its minimum; Envoy's HTTP/2
 * keepalive pings are the same frames). Slow by nature (~20-30s): it needs the pings to happen. A server that
 * permits fewer pings is the control that shows the pings really flow and are enforced.
 */
class KeepAliveTest {
  @TempDir Path dir;

  @Test
  void grpcJavaKeepalivePingsAreAcceptedWhereAStricterPolicyRejectsThem() throws Exception {
    Path strictDir = Files.createDirectory(dir.resolve("strict"));
    Path defaultDir = Files.createDirectory(dir.resolve("default"));
    try (OpsFixture byDefault = new OpsFixture(defaultDir);
        OpsFixture strict = new OpsFixture(strictDir,
            o -> o.withKeepAlive(Duration.ofMinutes(5), null, null))) {
      Pinger accepted = pingingClient(byDefault);
      Pinger rejected = pingingClient(strict);
      // grpc-java servers allow 2 ping strikes, then send GOAWAY ENHANCE_YOUR_CALM
      // ("too_many_pings"), which the client sees as RESOURCE_EXHAUSTED.
      Status control = rejected.client().closed().get(60, TimeUnit.SECONDS);
      assertThat(control.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertThat(accepted.client().closed()).isNotDone();
      accepted.client().ack(accepted.cds());
      assertThat(accepted.client().closed()).isNotDone();
    }
  }

  /** A client that pings, and the CDS response it keeps for the ACK at the end. */
  private record Pinger(RawXdsClient.Sotw client, DiscoveryResponse cds) {}

  private static Pinger pingingClient(OpsFixture f) throws InterruptedException {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", f.server.xdsPort())
        .usePlaintext().keepAliveTime(10, TimeUnit.SECONDS).keepAliveTimeout(5, TimeUnit.SECONDS)
        .keepAliveWithoutCalls(true).build();
    RawXdsClient.Sotw c = RawXdsClient.sotwAds(ch, Node.newBuilder().setId("pinger").build());
    DiscoveryResponse cds = c.subscribe(CLUSTER);
    c.closed().whenComplete((s, t) -> ch.shutdownNow());
    return new Pinger(c, cds);
  }
}
