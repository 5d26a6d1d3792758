package dev.meridian.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.config.GrpcProfile;
import dev.meridian.internal.server.MeridianServer;
import io.grpc.xds.shaded.io.envoyproxy.envoy.admin.v3.ClientResourceStatus;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.status.v3.ClientConfig.GenericXdsConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real proxyless grpc-java 1.85.1 clients (io.grpc:grpc-xds) against Meridian run through the
 * {@code serve} code path with a config file on disk. grpc-java is the oracle: what it accepts,
 * routes, ACKs and NACKs is what a user would see.
 */
@Timeout(90) // every wait inside is bounded; this only guards against a hung client library
class ProxylessGrpcClientTest {
  static final Duration WAIT = Duration.ofSeconds(20);

  @TempDir Path dir;
  Greeter.Backend v1;
  Greeter.Backend v2;
  Csds csds;

  @BeforeEach
  void backends() throws Exception {
    v1 = new Greeter.Backend("v1");
    v2 = new Greeter.Backend("v2");
    csds = new Csds();
  }

  @AfterEach
  void stop() throws Exception {
    csds.close();
    v1.close();
    v2.close();
  }

  Config greeterTo(String routeAction) {
    return Config.service("greeter", routeAction).cluster("greeter-v1", v1.port())
        .cluster("greeter-v2", v2.port());
  }

  @Test
  void firstRpcTravelsLdsRdsCdsEdsAndEveryResourceIsAcked() throws Exception {
    try (Meridian meridian = Meridian.start(dir, greeterTo(Config.toCluster("greeter-v1")));
        XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "e2e-node", "greeter")) {
      // gRFC A27: the target's listener names the route config, whose route names the cluster,
      // whose EDS resource holds the endpoint; the RPC can only reach v1 through all four.
      assertThat(client.helloWhenReady()).isEqualTo("v1");

      for (String[] r : new String[][] {{Csds.LDS, "greeter"}, {Csds.RDS, "greeter-routes"},
          {Csds.CDS, "greeter-v1"}, {Csds.EDS, "greeter-v1"}}) {
        GenericXdsConfig seen = Await.value(WAIT, r[1] + " ACKED",
            () -> csds.withStatus(client, r[0], r[1], ClientResourceStatus.ACKED));
        assertThat(seen.getVersionInfo()).as("version of %s", r[1]).isNotEmpty();
      }
      assertThat(meridian.nacks()).isEmpty();
    }
  }

  @Test
  void replacingEndpointsInTheFileMovesTrafficToTheNewBackend() throws Exception {
    try (Greeter.Backend v1b = new Greeter.Backend("v1-replacement");
        Meridian meridian = Meridian.start(dir, greeterTo(Config.toCluster("greeter-v1")));
        XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "e2e-node", "greeter")) {
      assertThat(client.helloWhenReady()).isEqualTo("v1");

      long written = System.nanoTime();
      meridian.write(Config.service("greeter", Config.toCluster("greeter-v1"))
          .cluster("greeter-v1", v1b.port()).cluster("greeter-v2", v2.port()));
      List<String> seen = new ArrayList<>();
      Await.until(WAIT, "traffic on the replacement endpoint", () -> {
        seen.add(client.helloOrError());
        return seen.get(seen.size() - 1).equals("v1-replacement");
      });
      Measurements.record("endpoints replaced: file write -> first RPC on new endpoint",
          System.nanoTime() - written);
      // gRFC A27 / EDS: the new ClusterLoadAssignment replaces the endpoint set, so the old
      // backend gets nothing more; the switch itself fails no RPC (picks queue while connecting).
      assertThat(seen).allMatch(r -> r.equals("v1") || r.equals("v1-replacement"));
      for (int i = 0; i < 50; i++) {
        assertThat(client.hello()).isEqualTo("v1-replacement");
      }
    }
  }

  @Test
  void weightedClusters90To10SplitTrafficWithinFiveStandardDeviations() throws Exception {
    try (Meridian meridian = Meridian.start(dir, greeterTo(Config.toCluster("greeter-v1")));
        XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "e2e-node", "greeter")) {
      assertThat(client.helloWhenReady()).isEqualTo("v1");

      long written = System.nanoTime();
      meridian.write(greeterTo(Config.weighted("greeter-v1", 90, "greeter-v2", 10)));
      Await.until(WAIT, "a first RPC on greeter-v2", () -> client.helloOrError().equals("v2"));
      Measurements.record("weights 100/0 -> 90/10: file write -> first RPC on v2",
          System.nanoTime() - written);

      // gRFC A28: weighted_clusters picks a cluster per RPC at random in proportion to weight, so
      // the v2 count over N RPCs is Binomial(N, 0.1): mean 200, sd sqrt(2000*0.1*0.9) = 13.4 for
      // N = 2000. Accepting mean +/- 5 sd (133..267, 6.7%..13.3%) fails a correct client with
      // probability < 1e-6, yet catches any wrong weighting (e.g. 80/20 or 50/50).
      int n = 2000;
      int toV2 = 0;
      for (int i = 0; i < n; i++) {
        String r = client.hello();
        assertThat(r).isIn("v1", "v2");
        if (r.equals("v2")) {
          toV2++;
        }
      }
      Measurements.note("weighted 90/10 over " + n + " RPCs: " + (n - toV2) + " v1 / " + toV2 + " v2 ("
          + String.format("%.1f%%", 100.0 * toV2 / n) + " to v2)");
      assertThat(toV2).isBetween(133, 267);
    }
  }

  @Test
  void oneWriteThatUpdatesAClusterAndMovesTheWeightsMovesTrafficWithinOneSecond() throws Exception {
    // Issue 18 §1: the route used to wait for an EDS request grpc-java never sends after a
    // cluster update (its EDS subscription did not change), so traffic moved only after 5 s.
    try (Meridian meridian = Meridian.start(dir,
            greeterTo(Config.weighted("greeter-v1", 100, "greeter-v2", 0)));
        XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "e2e-node", "greeter")) {
      assertThat(client.helloWhenReady()).isEqualTo("v1");
      // The route names both clusters, so the client runs both, warm, before the edit.
      for (String[] r : new String[][] {{Csds.CDS, "greeter-v1"}, {Csds.CDS, "greeter-v2"},
          {Csds.EDS, "greeter-v1"}, {Csds.EDS, "greeter-v2"}}) {
        Await.value(WAIT, r[1] + " ACKED", () -> csds.withStatus(client, r[0], r[1],
            ClientResourceStatus.ACKED));
      }
      String v2Before = csds.resource(client, Csds.CDS, "greeter-v2").getVersionInfo();

      // One write: greeter-v2's connect_timeout changes and the weights move to it.
      String slowerConnect = Config.cluster("greeter-v2", "ROUND_ROBIN")
          .replace("\"connect_timeout\": \"1s\"", "\"connect_timeout\": \"2s\"");
      long written = System.nanoTime();
      meridian.write(Config.service("greeter", Config.weighted("greeter-v1", 0, "greeter-v2", 100))
          .cluster("greeter-v1", v1.port()).add(slowerConnect)
          .add(Config.endpoints("greeter-v2", v2.port())));
      Await.until(WAIT, "a first RPC on greeter-v2", () -> client.helloOrError().equals("v2"));
      long moved = System.nanoTime() - written;
      Measurements.record("cluster updated + weights 100/0 -> 0/100 in one write: file write ->"
          + " first RPC on v2", moved);
      assertThat(Duration.ofNanos(moved)).isLessThan(Duration.ofSeconds(1));
      // Both halves of the edit arrived: the updated cluster too, and every RPC now goes to v2.
      assertThat(csds.resource(client, Csds.CDS, "greeter-v2").getVersionInfo())
          .isNotEqualTo(v2Before);
      for (int i = 0; i < 20; i++) {
        assertThat(client.hello()).isEqualTo("v2");
      }
      assertThat(meridian.nacks()).isEmpty();
    }
  }

  @Test
  void nackedClusterIsRecordedNotResentRpcsKeepFlowingAndTheFixIsAcked() throws Exception {
    Config good = greeterTo(Config.toCluster("greeter-v1"));
    try (Meridian meridian = Meridian.start(dir, good);
        XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "e2e-node", "greeter")) {
      assertThat(client.helloWhenReady()).isEqualTo("v1");
      GenericXdsConfig acked = Await.value(WAIT, "greeter-v1 ACKED",
          () -> csds.withStatus(client, Csds.CDS, "greeter-v1", ClientResourceStatus.ACKED));

      // MAGLEV is a valid Envoy lb_policy that grpc-java cannot run: it NACKs the CDS response.
      Config bad = Config.service("greeter", Config.toCluster("greeter-v1"))
          .add(Config.cluster("greeter-v1", "MAGLEV")).add(Config.endpoints("greeter-v1", v1.port()))
          .cluster("greeter-v2", v2.port());
      // `meridian validate --profile grpc` predicts exactly this NACK.
      Path badFile = dir.resolve("bad.json");
      Files.writeString(badFile, bad.render());
      assertThat(GrpcProfile.check(new ConfigLoader().load(badFile).config()))
          .extracting(Object::toString)
          .containsExactly("ERROR Cluster greeter-v1: lb_policy: grpc-java NACKs lb_policy MAGLEV"
              + " (supported: ROUND_ROBIN, RING_HASH, LEAST_REQUEST, or load_balancing_policy)");
      meridian.write(bad);
      GenericXdsConfig nacked = Await.value(WAIT, "greeter-v1 NACKED",
          () -> csds.withStatus(client, Csds.CDS, "greeter-v1", ClientResourceStatus.NACKED));
      // CSDS (gRFC A40): a NACKED resource keeps the last accepted version; error_state holds the
      // rejected version and the client's reason.
      assertThat(nacked.getVersionInfo()).isEqualTo(acked.getVersionInfo());
      assertThat(nacked.getErrorState().getVersionInfo()).isNotEqualTo(acked.getVersionInfo());
      assertThat(nacked.getErrorState().getDetails()).contains("greeter-v1");
      Measurements.note("grpc-java NACK for lb_policy MAGLEV: " + nacked.getErrorState().getDetails());

      // Meridian records the NACK with the client's own message.
      List<String> nacks = Await.value(WAIT, "Meridian to record the NACK",
          () -> meridian.nacks().isEmpty() ? null : meridian.nacks());
      assertThat(nacks).hasSize(1);
      assertThat(nacks.get(0)).startsWith("e2e-node CDS").contains("greeter-v1");

      // Spec "ACK and NACK semantics summary": the client keeps using its last good config, and the
      // server must not resend the rejected version (it would be NACKed again, in a loop). This is
      // a negative assertion, so it needs an observation window: 2 s of RPCs, well over the
      // sub-second config round trips measured above, in which no second NACK may appear.
      long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
      while (System.nanoTime() < until) {
        assertThat(client.hello()).isEqualTo("v1");
      }
      assertThat(meridian.nacks()).hasSize(1);
      assertThat(csds.resource(client, Csds.CDS, "greeter-v1").getClientStatus())
          .isEqualTo(ClientResourceStatus.NACKED);

      meridian.write(good);
      GenericXdsConfig fixed = Await.value(WAIT, "greeter-v1 ACKED after the fix",
          () -> csds.withStatus(client, Csds.CDS, "greeter-v1", ClientResourceStatus.ACKED));
      assertThat(fixed.hasErrorState()).isFalse();
      assertThat(client.hello()).isEqualTo("v1");
      assertThat(meridian.nacks()).hasSize(1);
    }
  }

  @Test
  void deletingTheClusterGivesDoesNotExistAndRestoringItRecovers() throws Exception {
    Config good = greeterTo(Config.toCluster("greeter-v1"));
    try (Meridian meridian = Meridian.start(dir, good);
        XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "e2e-node", "greeter")) {
      assertThat(client.helloWhenReady()).isEqualTo("v1");

      meridian.write(Config.service("greeter", Config.toCluster("greeter-v1"))
          .cluster("greeter-v2", v2.port()));
      // Spec "Deleting Resources": in SotW a Cluster missing from a CDS response is deleted; no
      // does-not-exist timer is involved, so this is immediate.
      Await.value(WAIT, "greeter-v1 DOES_NOT_EXIST", () -> csds.withStatus(client, Csds.CDS,
          "greeter-v1", ClientResourceStatus.DOES_NOT_EXIST));
      Await.until(WAIT, "RPCs to fail UNAVAILABLE",
          () -> client.helloOrError().equals("error:UNAVAILABLE"));

      meridian.write(good);
      Await.value(WAIT, "greeter-v1 ACKED again",
          () -> csds.withStatus(client, Csds.CDS, "greeter-v1", ClientResourceStatus.ACKED));
      Await.until(WAIT, "RPCs to recover", () -> client.helloOrError().equals("v1"));
      assertThat(meridian.nacks()).isEmpty();
    }
  }

  @Test
  void deletingTheListenerGivesDoesNotExistAndRestoringItRecovers() throws Exception {
    Config good = greeterTo(Config.toCluster("greeter-v1"));
    // The only listener, which the client subscribes to: without --allow-emptying its deletion
    // would be held (docs/config.md), and the client would never see it.
    try (Meridian meridian = Meridian.startWith(dir, good, o -> o.withAllowEmptying(true));
        XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "e2e-node", "greeter")) {
      assertThat(client.helloWhenReady()).isEqualTo("v1");

      meridian.write(new Config().add(Config.routes("greeter-routes", Config.toCluster("greeter-v1")))
          .cluster("greeter-v1", v1.port()));
      // Spec "Deleting Resources": a Listener missing from an LDS response is deleted; gRFC A27:
      // the channel then fails RPCs with UNAVAILABLE.
      Await.value(WAIT, "greeter DOES_NOT_EXIST", () -> csds.withStatus(client, Csds.LDS,
          "greeter", ClientResourceStatus.DOES_NOT_EXIST));
      Await.until(WAIT, "RPCs to fail UNAVAILABLE",
          () -> client.helloOrError().equals("error:UNAVAILABLE"));

      meridian.write(good);
      Await.value(WAIT, "greeter ACKED again",
          () -> csds.withStatus(client, Csds.LDS, "greeter", ClientResourceStatus.ACKED));
      Await.until(WAIT, "RPCs to recover", () -> client.helloOrError().equals("v1"));
    }
  }

  @Test
  void restartedMeridianIsRejoinedWithTheSameVersionsAndNoFailedRpc() throws Exception {
    try (Meridian meridian = Meridian.start(dir, greeterTo(Config.toCluster("greeter-v1")));
        XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "e2e-node", "greeter")) {
      assertThat(client.helloWhenReady()).isEqualTo("v1");
      Await.until(WAIT, "all four resources ACKED", () -> csds.resources(client).size() == 4
          && csds.resources(client).stream()
              .allMatch(r -> r.getClientStatus() == ClientResourceStatus.ACKED));
      List<GenericXdsConfig> before = csds.resources(client);

      long restarted = System.nanoTime();
      meridian.restart();
      // The client reconnects on its own backoff; meanwhile it keeps serving from its cache.
      Await.until(Duration.ofSeconds(30), "the client to reconnect", () -> {
        assertThat(client.hello()).isEqualTo("v1");
        return meridian.server().hub().streamCount() > 0;
      });
      Measurements.record("Meridian restart -> client's ADS stream back", System.nanoTime() - restarted);
      // Spec "Versioning and Node Identifier" (README: versions from content): the client presents
      // the versions it holds, the new process computes the same ones and sends nothing, so the
      // client sees no update at all: same versions, same last_updated, still ACKED, no NACK.
      for (int i = 0; i < 20; i++) {
        assertThat(client.hello()).isEqualTo("v1");
      }
      assertThat(csds.resources(client)).containsExactlyInAnyOrderElementsOf(before);
      assertThat(meridian.nacks()).isEmpty();
    }
  }

  @Test
  void clientsWithNodeIdsInDifferentGroupsAreRoutedDifferently() throws Exception {
    Config canary = Config.service("greeter", Config.toCluster("greeter-v2"))
        .cluster("greeter-v2", v2.port());
    Config config = greeterTo(Config.toCluster("greeter-v1")).group("canary", "canary-*", canary);
    try (Meridian meridian = Meridian.start(dir, config);
        XdsTestClient stable = new XdsTestClient(meridian.xdsPort(), "stable-1", "greeter");
        XdsTestClient canaryClient = new XdsTestClient(meridian.xdsPort(), "canary-1", "greeter")) {
      // Same target, same listener name: the node id alone selects the view (docs/config.md groups).
      for (int i = 0; i < 10; i++) {
        assertThat(stable.helloWhenReady()).isEqualTo("v1");
        assertThat(canaryClient.helloWhenReady()).isEqualTo("v2");
      }
      assertThat(csds.resource(canaryClient, Csds.CDS, "greeter-v1")).isNull();
    }
  }

  @Test
  void theProxylessExampleConfigRoutesAGrpcJavaClientAsItsReadmeSays() throws Exception {
    // examples/proxyless-grpc/meridian.yaml as shipped, with its fixed backend ports (50051/50052)
    // swapped for this test's ephemeral ones.
    String example = Files.readString(Path.of("..", "examples", "proxyless-grpc", "meridian.yaml"))
        .replace("port_value: 50051", "port_value: " + v1.port())
        .replace("port_value: 50052", "port_value: " + v2.port());
    Path file = dir.resolve("meridian.yaml");
    Files.writeString(file, example);
    try (MeridianServer meridian = new MeridianServer(
            new MeridianServer.Options(file, "127.0.0.1", 0, 0, 1000)).start();
        XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "greeter-client-1", "greeter")) {
      assertThat(client.helloWhenReady()).isIn("v1", "v2");
      int toV2 = 0;
      for (int i = 0; i < 200; i++) {
        if (client.hello().equals("v2")) {
          toV2++;
        }
      }
      // 90/10 as shipped: Binomial(200, 0.1) has mean 20, sd 4.2; mean +/- 5 sd is 1..41
      // (P(0) = 0.9^200 < 1e-9).
      assertThat(toV2).isBetween(1, 41);
    }
  }

  @Test
  void aLocalityWithoutWeightIsAckedButIgnoredAsTheGrpcProfileWarns() throws Exception {
    String unweighted = Config.endpoints("greeter-v1", v1.port())
        .replace("\"load_balancing_weight\": 1, ", "");
    Config config = Config.service("greeter", Config.toCluster("greeter-v1"))
        .add(Config.cluster("greeter-v1", "ROUND_ROBIN")).add(unweighted);
    Path file = dir.resolve("unweighted.json");
    Files.writeString(file, config.render());
    assertThat(GrpcProfile.check(new ConfigLoader().load(file).config()))
        .extracting(GrpcProfile.Finding::field).containsExactly("endpoints[0].load_balancing_weight");
    try (Meridian meridian = Meridian.start(dir, config);
        XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "e2e-node", "greeter")) {
      // gRFC A27 / grpc-java: a locality without load_balancing_weight is dropped, silently: the
      // ClusterLoadAssignment is ACKED, yet the cluster has no endpoints and RPCs fail.
      // (The first RPC also makes the idle channel start resolving.)
      Await.until(WAIT, "RPCs to fail UNAVAILABLE",
          () -> client.helloOrError().equals("error:UNAVAILABLE"));
      Await.value(WAIT, "greeter-v1 EDS ACKED",
          () -> csds.withStatus(client, Csds.EDS, "greeter-v1", ClientResourceStatus.ACKED));
      assertThat(meridian.nacks()).isEmpty();
    }
  }

  @Test
  void aHostnameEndpointIsNackedAsTheGrpcProfileReports() throws Exception {
    String byName = Config.endpoints("greeter-v1", v1.port()).replace("127.0.0.1", "localhost");
    Config config = Config.service("greeter", Config.toCluster("greeter-v1"))
        .add(Config.cluster("greeter-v1", "ROUND_ROBIN")).add(byName);
    Path file = dir.resolve("hostname.json");
    Files.writeString(file, config.render());
    assertThat(GrpcProfile.check(new ConfigLoader().load(file).config()))
        .extracting(GrpcProfile.Finding::severity, GrpcProfile.Finding::field)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(GrpcProfile.Severity.ERROR,
            "endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address"));
    try (Meridian meridian = Meridian.start(dir, config);
        XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "e2e-node", "greeter")) {
      // grpc-java requires IP literals in EDS: with no earlier good version the cluster has no
      // endpoints, so RPCs fail; the NACK reaches Meridian with the client's reason.
      Await.until(WAIT, "RPCs to fail UNAVAILABLE",
          () -> client.helloOrError().equals("error:UNAVAILABLE"));
      GenericXdsConfig nacked = Await.value(WAIT, "greeter-v1 EDS NACKED",
          () -> csds.withStatus(client, Csds.EDS, "greeter-v1", ClientResourceStatus.NACKED));
      assertThat(nacked.getErrorState().getDetails()).contains("not an IP");
      Await.until(WAIT, "Meridian to record the NACK", () -> !meridian.nacks().isEmpty());
      assertThat(meridian.nacks().get(0)).startsWith("e2e-node EDS").contains("not an IP");
    }
  }

  /** The one scenario that waits out grpc-java's fixed 15 s does-not-exist timer. */
  @Test
  void aRouteConfigurationThatNeverExistedIsDoesNotExistAfterTheClientsTimerAndAddingItRecovers()
      throws Exception {
    Config withoutRoutes = new Config().add(Config.clientListener("greeter", "greeter-routes"))
        .cluster("greeter-v1", v1.port());
    try (Meridian meridian = Meridian.start(dir, withoutRoutes);
        XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "e2e-node", "greeter")) {
      client.helloOrError(); // leaves idle: resolution starts
      // Spec "Knowing When a Requested Resource Does Not Exist": RDS is not full-state in SotW, so
      // Meridian has nothing to say about a missing RouteConfiguration; the client decides it does
      // not exist when its timer (15 s in grpc-java, gRFC A27) expires, and fails RPCs.
      Await.until(Duration.ofSeconds(45), "RPCs to fail UNAVAILABLE", () -> {
        GenericXdsConfig r = csds.resource(client, Csds.RDS, "greeter-routes");
        assertThat(r == null || r.getClientStatus() == ClientResourceStatus.REQUESTED
            || r.getClientStatus() == ClientResourceStatus.DOES_NOT_EXIST).isTrue();
        return client.helloOrError().equals("error:UNAVAILABLE");
      });
      Await.value(WAIT, "greeter-routes DOES_NOT_EXIST", () -> csds.withStatus(client, Csds.RDS,
          "greeter-routes", ClientResourceStatus.DOES_NOT_EXIST));

      meridian.write(greeterTo(Config.toCluster("greeter-v1")));
      Await.until(WAIT, "RPCs to recover", () -> client.helloOrError().equals("v1"));
      assertThat(csds.resource(client, Csds.RDS, "greeter-routes").getClientStatus())
          .isEqualTo(ClientResourceStatus.ACKED);
    }
  }
}
