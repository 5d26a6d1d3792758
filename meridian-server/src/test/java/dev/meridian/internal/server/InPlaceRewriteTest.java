package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.InPlaceWriter;
import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 18 §2 as a client saw it: the config file of a running server rewritten in place
 * (truncate, then write) made a connected client receive a CDS response with no clusters. Here a
 * SotW and a Delta ADS client stay connected through many in-place rewrites between two versions
 * and check every response they receive.
 */
class InPlaceRewriteTest {
  @TempDir Path dir;
  MeridianServer server;
  ManagedChannel channel;

  @AfterEach
  void cleanUp() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.close();
    }
  }

  static String cluster(String name) {
    return "  - { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: " + name
        + ", connect_timeout: 1s, per_connection_buffer_limit_bytes: 32768 }\n";
  }

  /** One cluster of its own first, then 30 common ones: a prefix of the file lacks some. */
  static String version(String own) {
    StringBuilder sb = new StringBuilder("resources:\n").append(cluster(own));
    for (String c : common()) {
      sb.append(cluster(c));
    }
    return sb.toString();
  }

  static Set<String> common() {
    Set<String> s = new TreeSet<>();
    for (int i = 0; i < 30; i++) {
      s.add(String.format("common-%02d", i));
    }
    return s;
  }

  static Set<String> with(String own) {
    Set<String> s = new TreeSet<>(common());
    s.add(own);
    return s;
  }

  static Stream<Arguments> rewrites() {
    return Stream.of(Arguments.of(InPlaceWriter.FAST, 30),
        Arguments.of(InPlaceWriter.SLOW, 20), Arguments.of(InPlaceWriter.REDIRECTED, 10));
  }

  static Set<String> names(DiscoveryResponse r) throws Exception {
    Set<String> names = new TreeSet<>();
    for (var a : r.getResourcesList()) {
      names.add(a.unpack(Cluster.class).getName());
    }
    return names;
  }

  @ParameterizedTest(name = "{0} writer, {1} rewrites")
  @MethodSource("rewrites")
  @Timeout(value = 120)
  void connectedClientsNeverReceiveAConfigMissingAResourceOfBothVersions(InPlaceWriter writer,
      int rewrites) throws Exception {
    Path config = dir.resolve("config.yaml");
    Files.writeString(config, version("only-a"));
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 50)).start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.xdsPort()).usePlaintext().build();
    RawXdsClient.Sotw sotw = RawXdsClient.sotwAds(channel, "sotw");
    sotw.send(ResourceType.CLUSTER, "", "");
    DiscoveryResponse first = sotw.take();
    assertThat(names(first)).isEqualTo(with("only-a"));
    sotw.ack(first);
    RawXdsClient.Delta delta = RawXdsClient.deltaAds(channel, "delta");
    delta.send(ResourceType.CLUSTER, DeltaDiscoveryRequest.newBuilder()); // wildcard
    Set<String> held = new TreeSet<>();
    awaitDelta(delta, held, with("only-a"), "start");
    for (int i = 0; i < rewrites; i++) {
      String own = i % 2 == 0 ? "only-b" : "only-a";
      writer.write(config, version(own));
      String context = "rewrite " + i;
      // SotW CDS is full state: every response is all the client keeps.
      for (Set<String> got = Set.of(); !got.equals(with(own)); ) {
        DiscoveryResponse r = sotw.take();
        got = names(r);
        assertThat(got).as("%s: a SotW CDS response", context).containsAll(common());
        sotw.ack(r);
      }
      awaitDelta(delta, held, with(own), context);
    }
  }

  /**
   * Issue 18 §2: with emptyings allowed (serve --allow-emptying), a deletion of every cluster
   * reaches clients once the file has been stable for 1 s (an atomic rename: nothing
   * half-written about it). Without it, such a reload is held (EmptyingHeldTest).
   */
  @Test
  @Timeout(value = 60)
  void deletingEveryClusterReachesClientsAfterOneSecondOfStabilityWhenAllowed() throws Exception {
    Path config = dir.resolve("config.yaml");
    Files.writeString(config, version("only-a"));
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 50)
        .withAllowEmptying(true)).start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.xdsPort()).usePlaintext().build();
    RawXdsClient.Sotw sotw = RawXdsClient.sotwAds(channel, "sotw");
    sotw.send(ResourceType.CLUSTER, "", "");
    sotw.ack(sotw.take());
    long renamed = ConfigFiles.replaceByRename(config, "resources: []\n");
    DiscoveryResponse emptied = sotw.take();
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - renamed);
    assertThat(emptied.getResourcesList()).isEmpty();
    assertThat(millis).isBetween(1000L, 5000L);
  }

  /** Applies Delta responses to {@code held} until it is {@code expected}; checks each. */
  static void awaitDelta(RawXdsClient.Delta delta, Set<String> held, Set<String> expected,
      String context) throws Exception {
    while (!held.equals(expected)) {
      DeltaDiscoveryResponse r = delta.take();
      for (Resource res : r.getResourcesList()) {
        held.add(res.getName());
      }
      held.removeAll(r.getRemovedResourcesList());
      assertThat(held).as("%s: what a Delta client holds", context).containsAll(common());
      delta.ack(r);
    }
  }
}
