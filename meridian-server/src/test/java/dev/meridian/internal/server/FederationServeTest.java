package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.RawXdsClient;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.envoyproxy.envoy.service.discovery.v3.ResourceError;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26 over gRPC: {@code serve --authority} (gRFC A47), a Delta glob collection (xDS TP1
 * "Glob") that follows the config file, per-resource errors (TP3) and a SotW glob refused.
 */
class FederationServeTest {
  private static final String CDS = "envoy.config.cluster.v3.Cluster";
  private static final String MINE = "xdstp://mine.example/" + CDS + "/";
  private static final String THEIRS = "xdstp://theirs.example/" + CDS + "/";

  @TempDir Path dir;
  private MeridianServer server;
  private ManagedChannel channel;

  private Path config;

  private void start(String yaml) throws Exception {
    config = dir.resolve("c.yaml");
    Files.writeString(config, yaml);
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 200)
        .withAuthorities(Set.of("mine.example"))).start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.xdsPort()).usePlaintext().build();
  }

  @AfterEach
  void stop() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.close();
    }
  }

  private static String clusters(String... names) {
    StringBuilder yaml = new StringBuilder("resources:\n");
    for (String n : names) {
      yaml.append(ServeTest.cluster(n, 1));
    }
    return yaml.toString();
  }

  @Test
  void deltaGlobCollectionOfAServedAuthorityFollowsTheConfigAndAnotherAuthorityIsNotFound()
      throws Exception {
    start(clusters(MINE + "svc/a", MINE + "svc/b", MINE + "other/c", THEIRS + "svc/a"));
    RawXdsClient.Delta c = RawXdsClient.deltaAds(channel, "n");
    DeltaDiscoveryResponse first = c.subscribe(ResourceType.CLUSTER, MINE + "svc/*",
        THEIRS + "svc/a");
    assertThat(first.getResourcesList()).extracting(Resource::getName)
        .containsExactly(MINE + "svc/a", MINE + "svc/b");
    assertThat(first.getRemovedResourcesList()).containsExactly(THEIRS + "svc/a");
    assertThat(first.getResourceErrorsList()).singleElement().satisfies(e -> {
      assertThat(e.getResourceName().getName()).isEqualTo(THEIRS + "svc/a");
      assertThat(e.getErrorDetail().getCode()).isEqualTo(Status.Code.NOT_FOUND.value());
      assertThat(e.getErrorDetail().getMessage()).contains("theirs.example");
    });
    assertThat(first.getControlPlane().getIdentifier()).isNotEmpty(); // issue 21, still there
    c.ack(first);

    ConfigFiles.replaceByRename(config, clusters(MINE + "svc/b", MINE + "svc/d"));
    DeltaDiscoveryResponse next = c.take(ResourceType.CLUSTER);
    assertThat(next.getResourcesList()).extracting(Resource::getName)
        .containsExactly(MINE + "svc/d");
    // ADS make-before-break: a removed cluster goes in the response after (docs/protocol.md).
    c.ack(next);
    assertThat(c.take(ResourceType.CLUSTER).getRemovedResourcesList())
        .containsExactly(MINE + "svc/a");
  }

  @Test
  void sotwReportsAMissingNameAndRefusesAGlobCollection() throws Exception {
    start(clusters(MINE + "svc/a", THEIRS + "svc/a"));
    RawXdsClient.Sotw c = RawXdsClient.sotwAds(channel, "n");
    DiscoveryResponse first = c.subscribe(ResourceType.CLUSTER, MINE + "svc/a", THEIRS + "svc/a");
    assertThat(first.getResourcesCount()).isEqualTo(1);
    assertThat(first.getResourceErrorsList()).extracting(ResourceError::getResourceName)
        .extracting(n -> n.getName()).containsExactly(THEIRS + "svc/a");
    c.ack(first, MINE + "svc/a", THEIRS + "svc/a");
    c.send(ResourceType.CLUSTER, first.getVersionInfo(), first.getNonce(), MINE + "svc/*");
    Status closed = c.awaitClose();
    assertThat(closed.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(closed.getDescription()).contains("Incremental");
  }
}
