package dev.meridian.internal.server;

import static dev.meridian.xds.ResourceType.CLUSTER;
import static dev.meridian.xds.ResourceType.ENDPOINT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 21, "Failover": two MeridianServers load the same config (each its own file, same
 * content) and so serve the same versions. A client in sync with replica A moves to replica B as
 * a reconnecting client does (spec "Versioning and Node Identifier"; "Incremental xDS":
 * {@code initial_resource_versions}) and is sent nothing it already holds; afterwards only
 * changes arrive. Clusters are a wildcard subscription (full state in SotW), endpoints a named
 * one (only changes in SotW), with an endpoint set the client does not name.
 */
class FailoverTest {
  enum Variant {
    SOTW_ADS, SOTW_PER_TYPE, DELTA_ADS, DELTA_PER_TYPE;

    boolean sotw() {
      return this == SOTW_ADS || this == SOTW_PER_TYPE;
    }

    boolean ads() {
      return this == SOTW_ADS || this == DELTA_ADS;
    }
  }

  /** How long a stream must stay silent to count as "sent nothing". */
  static final Duration QUIET = Duration.ofMillis(600);
  static final String NODE = "envoy-failover";

  @TempDir Path dir;
  final List<MeridianServer> servers = new ArrayList<>();
  final List<ManagedChannel> channels = new ArrayList<>();

  static String config(int portA, int portC) {
    return "resources:\n" + ServeTest.cluster("a", 1) + ServeTest.cluster("b", 1)
        + ServeTest.endpoints("a", portA) + ServeTest.endpoints("b", 2000)
        + ServeTest.endpoints("c", portC);
  }

  MeridianServer start(String name, String yaml) throws Exception {
    Path file = dir.resolve(name + ".yaml");
    Files.writeString(file, yaml);
    MeridianServer s = new MeridianServer(new MeridianServer.Options(file, "127.0.0.1", 0, 0, 100)
        .withControlPlaneId("replica-" + name)).start();
    servers.add(s);
    return s;
  }

  Path file(String name) {
    return dir.resolve(name + ".yaml");
  }

  ManagedChannel channel(MeridianServer s) {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", s.xdsPort()).usePlaintext()
        .build();
    channels.add(ch);
    return ch;
  }

  @AfterEach
  void stop() throws Exception {
    for (ManagedChannel ch : channels) {
      ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    servers.forEach(MeridianServer::close);
  }

  /** Waits until {@code s} serves endpoint set {@code name} at another version than {@code before}. */
  static void awaitChanged(MeridianServer s, String name, String before) {
    OpsFixture.await("the replica serves the new config",
        () -> !before.equals(endpointVersion(s, name)));
  }

  static String endpointVersion(MeridianServer s, String name) {
    var r = s.hub().current().snapshot(ServedConfig.DEFAULT_GROUP).get(ENDPOINT).get(name);
    return r == null ? null : r.version();
  }

  // --- a client of one variant: one ADS stream, or one stream per type ---

  /** The streams of one client on one replica, and what it holds (its last ACKs). */
  abstract static class Client {
    final Variant v;
    String cdsVersion = "";
    String edsVersion = "";
    final Map<String, String> cds = new HashMap<>();
    final Map<String, String> eds = new HashMap<>();

    Client(Variant v) {
      this.v = v;
    }

    /** Subscribes to every cluster and to endpoints a and b, takes the answers and ACKs them. */
    abstract void syncFromScratch() throws Exception;

    /** Opens the streams as a reconnecting client does, telling the replica what it holds. */
    abstract void resume() throws Exception;

    /** Every response that arrives until the streams stay silent for {@link #QUIET}. */
    abstract List<Object> drain() throws Exception;

    /** The next response of {@code type}, ACKed. */
    abstract Object takeAndAck(ResourceType type) throws Exception;
  }

  static int resourcesIn(List<Object> responses) {
    int n = 0;
    for (Object r : responses) {
      n += r instanceof DiscoveryResponse d ? d.getResourcesCount()
          : ((DeltaDiscoveryResponse) r).getResourcesCount()
              + ((DeltaDiscoveryResponse) r).getRemovedResourcesCount();
    }
    return n;
  }

  static List<String> names(Object response) throws Exception {
    if (response instanceof DiscoveryResponse d) {
      return ServeTest.names(d);
    }
    DeltaDiscoveryResponse d = (DeltaDiscoveryResponse) response;
    return d.getResourcesList().stream().map(Resource::getName).toList();
  }

  final class Sotw extends Client {
    final RawXdsClient.Sotw cdsStream;
    final RawXdsClient.Sotw edsStream;

    Sotw(Variant v, MeridianServer s, Client from) {
      super(v);
      ManagedChannel ch = channel(s);
      cdsStream = v.ads() ? RawXdsClient.sotwAds(ch, NODE) : RawXdsClient.sotwPerType(ch, CLUSTER, NODE);
      edsStream = v.ads() ? cdsStream : RawXdsClient.sotwPerType(ch, ENDPOINT, NODE);
      if (from != null) {
        cdsVersion = from.cdsVersion;
        edsVersion = from.edsVersion;
      }
    }

    @Override
    void syncFromScratch() throws Exception {
      DiscoveryResponse c = cdsStream.subscribe(CLUSTER);
      assertThat(ServeTest.names(c)).containsExactly("a", "b");
      cdsStream.ack(c);
      cdsVersion = c.getVersionInfo();
      edsStream.send(ENDPOINT, "", "", "a", "b");
      DiscoveryResponse e = edsStream.take(ENDPOINT);
      assertThat(ServeTest.names(e)).containsExactly("a", "b");
      edsStream.ack(e, "a", "b");
      edsVersion = e.getVersionInfo();
    }

    @Override
    void resume() {
      // The last ACKed version_info and the same names, no nonce: a new stream's first request.
      cdsStream.send(CLUSTER, cdsVersion, "");
      edsStream.send(ENDPOINT, edsVersion, "", "a", "b");
    }

    @Override
    List<Object> drain() throws Exception {
      List<Object> all = new ArrayList<>(cdsStream.takeAll(QUIET));
      if (edsStream != cdsStream) {
        all.addAll(edsStream.takeAll(QUIET));
      }
      return all;
    }

    @Override
    Object takeAndAck(ResourceType type) throws Exception {
      RawXdsClient.Sotw s = type == CLUSTER ? cdsStream : edsStream;
      DiscoveryResponse r = s.take(type);
      if (type == CLUSTER) {
        s.ack(r);
        cdsVersion = r.getVersionInfo();
      } else {
        s.ack(r, "a", "b");
        edsVersion = r.getVersionInfo();
      }
      return r;
    }
  }

  final class Delta extends Client {
    final RawXdsClient.Delta cdsStream;
    final RawXdsClient.Delta edsStream;

    Delta(Variant v, MeridianServer s, Client from) {
      super(v);
      ManagedChannel ch = channel(s);
      cdsStream = v.ads() ? RawXdsClient.deltaAds(ch, NODE) : RawXdsClient.deltaPerType(ch, CLUSTER, NODE);
      edsStream = v.ads() ? cdsStream : RawXdsClient.deltaPerType(ch, ENDPOINT, NODE);
      if (from != null) {
        cds.putAll(from.cds);
        eds.putAll(from.eds);
      }
    }

    @Override
    void syncFromScratch() throws Exception {
      cdsStream.send(CLUSTER, DeltaDiscoveryRequest.newBuilder()); // a legacy wildcard
      assertThat(names(takeAndAck(CLUSTER))).containsExactly("a", "b");
      edsStream.send(ENDPOINT, DeltaDiscoveryRequest.newBuilder()
          .addResourceNamesSubscribe("a").addResourceNamesSubscribe("b"));
      assertThat(names(takeAndAck(ENDPOINT))).containsExactly("a", "b");
    }

    @Override
    void resume() {
      // Spec "Incremental xDS": the names it wants again, and what it holds of them.
      cdsStream.send(CLUSTER, DeltaDiscoveryRequest.newBuilder().putAllInitialResourceVersions(cds));
      edsStream.send(ENDPOINT, DeltaDiscoveryRequest.newBuilder()
          .addResourceNamesSubscribe("a").addResourceNamesSubscribe("b")
          .putAllInitialResourceVersions(eds));
    }

    @Override
    List<Object> drain() throws Exception {
      List<Object> all = new ArrayList<>(cdsStream.takeAll(QUIET));
      if (edsStream != cdsStream) {
        all.addAll(edsStream.takeAll(QUIET));
      }
      return all;
    }

    @Override
    Object takeAndAck(ResourceType type) throws Exception {
      RawXdsClient.Delta s = type == CLUSTER ? cdsStream : edsStream;
      DeltaDiscoveryResponse r = s.take(type);
      Map<String, String> held = type == CLUSTER ? cds : eds;
      r.getResourcesList().forEach(res -> held.put(res.getName(), res.getVersion()));
      r.getRemovedResourcesList().forEach(held::remove);
      s.ack(r);
      return r;
    }
  }

  Client client(Variant v, MeridianServer s, Client from) {
    return v.sotw() ? new Sotw(v, s, from) : new Delta(v, s, from);
  }

  // --- scenarios ---

  @ParameterizedTest
  @EnumSource(Variant.class)
  void clientMovingToAReplicaOnTheSameConfigIsSentNothingThenOnlyChanges(Variant v)
      throws Exception {
    MeridianServer a = start("a", config(1000, 3000));
    MeridianServer b = start("b", config(1000, 3000));
    Client onA = client(v, a, null);
    onA.syncFromScratch();
    // Endpoints c change on both replicas: this client does not name them and hears nothing.
    String c1 = endpointVersion(a, "c");
    assertThat(endpointVersion(b, "c")).isEqualTo(c1);
    ConfigFiles.replaceByRename(file("a"), config(1000, 3001));
    ConfigFiles.replaceByRename(file("b"), config(1000, 3001));
    awaitChanged(a, "c", c1);
    awaitChanged(b, "c", c1);
    assertThat(endpointVersion(b, "c")).isEqualTo(endpointVersion(a, "c"));
    assertThat(onA.drain()).isEmpty();

    a.close(); // replica A goes away; its client reconnects to B
    Client onB = client(v, b, onA);
    onB.resume();
    List<Object> resent = onB.drain();
    assertThat(resourcesIn(resent)).as("resources resent on failover").isZero();
    assertThat(resent).isEmpty();

    // Only B's file changes: endpoint set a, and only that, reaches the client.
    ConfigFiles.replaceByRename(file("b"), config(1001, 3001));
    assertThat(names(onB.takeAndAck(ENDPOINT))).containsExactly("a");
    assertThat(onB.drain()).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void clientMovingToAReplicaThatIsAheadGetsOnlyWhatDiffers(Variant v) throws Exception {
    MeridianServer a = start("a", config(1000, 3000));
    Client onA = client(v, a, null);
    onA.syncFromScratch();
    // B already serves a newer config: endpoint set a changed there.
    MeridianServer b = start("b", config(1001, 3000));
    a.close();
    Client onB = client(v, b, onA);
    onB.resume();
    List<Object> answer = onB.drain();
    // Clusters are the same on both: no answer. Endpoints: Delta sends only a; SotW cannot say
    // "only what differs" and answers the names it asks for (spec "Versioning and Node
    // Identifier": a different version_info is a first request).
    assertThat(answer).singleElement().satisfies(r -> assertThat(names(r))
        .containsExactlyElementsOf(v.sotw() ? List.of("a", "b") : List.of("a")));
    Object r = answer.get(0);
    assertThat(r instanceof DiscoveryResponse d ? d.getTypeUrl()
        : ((DeltaDiscoveryResponse) r).getTypeUrl()).isEqualTo(ENDPOINT.typeUrl());
  }

  @Test
  void replicasOnTheSameConfigServeTheSameVersions() throws Exception {
    MeridianServer a = start("a", config(1000, 3000));
    MeridianServer b = start("b", config(1000, 3000));
    for (Variant v : Variant.values()) {
      Client onA = client(v, a, null);
      Client onB = client(v, b, null);
      onA.syncFromScratch();
      onB.syncFromScratch();
      assertThat(onB.cdsVersion).as(v + " CDS version_info").isEqualTo(onA.cdsVersion);
      assertThat(onB.edsVersion).as(v + " EDS version_info").isEqualTo(onA.edsVersion);
      assertThat(onB.cds).as(v + " cluster versions").isEqualTo(onA.cds);
      assertThat(onB.eds).as(v + " endpoint versions").isEqualTo(onA.eds);
    }
  }
}
