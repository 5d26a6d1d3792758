package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import dev.meridian.testing.RawXdsClient;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MeridianServerCloseTest {
  @TempDir Path dir;

  @Test
  void closeEndsOpenXdsStreamsPromptlyInsteadOfWaitingOutAGracePeriod() throws Exception {
    Path config = dir.resolve("c.yaml");
    Files.writeString(config, "resources:\n- {'@type': type.googleapis.com/envoy.config.cluster.v3.Cluster,"
        + " name: c, type: EDS, eds_cluster_config: {eds_config: {ads: {}}}}\n");
    MeridianServer server = new MeridianServer(
        new MeridianServer.Options(config, "127.0.0.1", 0, 0, 1000)).start();
    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.xdsPort())
        .usePlaintext().build();
    try {
      RawXdsClient.Sotw client = RawXdsClient.sotwAds(channel, "n");
      client.send(ResourceType.CLUSTER, "", "");
      client.take();

      // An xDS stream never ends by itself, so a graceful shutdown could only time out: close()
      // ends it at once (clients reconnect, to this server's successor, with their versions).
      long start = System.nanoTime();
      server.close();
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertThat(millis).isLessThan(2000);
      // The transport is torn down under the call: the client sees it reset (CANCELLED) or gone.
      assertThat(client.closed().get(5, TimeUnit.SECONDS).getCode())
          .isIn(Status.Code.CANCELLED, Status.Code.UNAVAILABLE);
    } finally {
      channel.shutdownNow();
      server.close();
    }
  }
}
