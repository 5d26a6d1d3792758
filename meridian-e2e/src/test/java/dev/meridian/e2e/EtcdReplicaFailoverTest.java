package dev.meridian.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.config.ReferenceCheck;
import dev.meridian.internal.etcd.EtcdApply;
import dev.meridian.internal.etcd.EtcdCli;
import dev.meridian.internal.etcd.EtcdConfigSource;
import dev.meridian.internal.etcd.EtcdTarget;
import dev.meridian.internal.server.MeridianServer;
import dev.meridian.testing.EtcdProcess;
import io.etcd.jetcd.Client;
import io.grpc.xds.shaded.io.envoyproxy.envoy.admin.v3.ClientResourceStatus;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.status.v3.ClientConfig.GenericXdsConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replicas on etcd with a real grpc-java 1.85.1 xDS client (issue 21): three Meridian replicas
 * serve one config from one real etcd; the replica the client is connected to is closed; the
 * client keeps routing RPCs, is in sync on another replica having been sent nothing, and then
 * follows a change applied after the loss.
 *
 * <p><b>How the client reaches another replica.</b> grpc-java's xDS client falls back to a second
 * {@code xds_servers} entry (gRFC A71) only while it holds no resources, so a client that loses its
 * replica mid-life stays with its one server URI. A production setup therefore puts the replicas
 * behind one name: DNS with several records, or a Kubernetes (headless) Service. Here the bootstrap's
 * {@code server_uri} is one name resolved to all three replicas ({@link ReplicaAddresses}), which is
 * what grpc-java does with a DNS name of several records: the same resolver result, the same
 * pick_first balancer on the xDS channel. A real DNS name was not an option on this machine:
 * {@code localhost} resolves to 127.0.0.1 only (no {@code ::1} entry in /etc/hosts), and the
 * tests touch no system files; an in-test TCP proxy would model an L4 load balancer instead, with
 * the proxy rather than grpc-java choosing the replica.
 *
 * <p>The replica is "killed" in-process with {@link MeridianServer#close}: its streams end
 * (UNAVAILABLE) and its port closes, as the client sees a lost replica. A real {@code kill -9}
 * of a {@code meridian serve} process is what meridian-bench's ReplicaBench measures.
 */
@Timeout(120) // every wait inside is bounded; this only guards against a hung client library
class EtcdReplicaFailoverTest {
  static final Duration WAIT = Duration.ofSeconds(20);
  static final String NODE = "failover-node";

  @TempDir Path dir;
  final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close();
    }
  }

  <T extends AutoCloseable> T keep(T t) {
    open.add(t);
    return t;
  }

  /** {@code meridian apply --config URL -f FILE} as the CLI runs it: load, diff, one transaction. */
  void apply(Client etcd, EtcdTarget target, Config config, String name) throws Exception {
    Path file = dir.resolve(name + ".json");
    Files.writeString(file, config.render());
    EtcdApply.Result r = new EtcdApply(etcd, target).apply(new ConfigLoader().load(file).config(),
        true, false, ReferenceCheck.REJECT);
    assertThat(r.written() || r.changes().stream()
        .allMatch(c -> c.kind() == EtcdApply.Kind.UNCHANGED)).isTrue();
  }

  MeridianServer replica(EtcdTarget target) throws Exception {
    MeridianServer s = new MeridianServer(
        new MeridianServer.Options(null, "127.0.0.1", 0, 0, 1000)
            .withShutdownTimeout(Duration.ofSeconds(2)),
        new EtcdConfigSource(target, new ConfigLoader()).connect());
    keep(s::close);
    return s.start();
  }

  static final HttpClient HTTP = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();

  static String get(MeridianServer s, String path) {
    try {
      return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.httpPort() + path))
          .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    } catch (Exception e) {
      throw new AssertionError("GET " + path + ": " + e, e);
    }
  }

  /** Discovery responses the replica has sent, all types ({@code meridian_responses_total}). */
  static long responsesSent(MeridianServer s) {
    return get(s, "/metrics").lines().filter(l -> l.startsWith("meridian_responses_total{"))
        .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1).trim())).sum();
  }

  @Test
  void grpcJavaClientWhoseReplicaIsKilledIsInSyncOnAnotherWithNothingResentAndFollowsTheNextApply()
      throws Exception {
    Greeter.Backend v1 = keep(new Greeter.Backend("v1"));
    Greeter.Backend v2 = keep(new Greeter.Backend("v2"));
    Greeter.Backend v1b = keep(new Greeter.Backend("v1-replacement"));
    EtcdProcess etcd = keep(EtcdProcess.start());
    EtcdTarget target = EtcdTarget.parse(etcd.url("/meridian"), null);
    Client etcdClient = keep(EtcdCli.connect(target));
    apply(etcdClient, target, Config.service("greeter", Config.toCluster("greeter-v1"))
        .cluster("greeter-v1", v1.port()).cluster("greeter-v2", v2.port()), "first");

    List<MeridianServer> replicas = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      replicas.add(replica(target));
    }
    Await.until(WAIT, "every replica ready", () -> replicas.stream()
        .allMatch(MeridianServer::isReady));
    // The status page's data (issue 24): the store's state and the load it delivered.
    String status = get(replicas.get(0), "/status");
    assertThat(status).contains("\"source\": \"" + target.url() + "\"").contains("\"connected\": true")
        .contains("\"result\": \"ok\"").contains("\"last_failed_reload\": null");
    ReplicaAddresses name = keep(new ReplicaAddresses(
        replicas.stream().map(MeridianServer::xdsPort).toList()));
    Map<String, Object> bootstrap = Map.of(
        "xds_servers", List.of(Map.of(
            "server_uri", name.target(),
            "channel_creds", List.of(Map.of("type", "insecure")),
            "server_features", List.of("xds_v3"))),
        "node", Map.of("id", NODE, "cluster", "e2e"));
    Csds csds = keep(new Csds());
    XdsTestClient client = keep(new XdsTestClient(bootstrap, "greeter"));

    assertThat(client.helloWhenReady()).isEqualTo("v1");
    Await.until(WAIT, "LDS, RDS, CDS and EDS ACKED", () -> csds.resources(client).size() == 4
        && csds.resources(client).stream()
            .allMatch(r -> r.getClientStatus() == ClientResourceStatus.ACKED));
    List<GenericXdsConfig> before = csds.resources(client);
    MeridianServer first = Await.value(WAIT, "the replica holding the client's stream",
        () -> replicas.stream().filter(r -> r.hub().streamCount() > 0).findFirst().orElse(null));
    List<MeridianServer> survivors = replicas.stream().filter(r -> r != first).toList();
    assertThat(survivors).allMatch(r -> r.hub().streamCount() == 0);
    assertThat(survivors).allMatch(r -> responsesSent(r) == 0);

    long killed = System.nanoTime();
    first.close();

    // The data plane does not go through Meridian: RPCs keep flowing on the client's cached config
    // while its xDS stream moves. Every RPC in the reconnect window must succeed.
    List<String> during = new ArrayList<>();
    MeridianServer next = Await.value(WAIT, "the client's stream on a surviving replica", () -> {
      during.add(client.helloOrError());
      return survivors.stream().filter(r -> r.hub().streamCount() > 0).findFirst().orElse(null);
    });
    Measurements.record("replica closed -> grpc-java's ADS stream on another replica",
        System.nanoTime() - killed);
    assertThat(during).isNotEmpty().allMatch(r -> r.equals("v1"));
    Await.until(WAIT, "the surviving replica's /clients to show the client in sync", () -> {
      String clients = get(next, "/clients?node_id=" + NODE);
      return clients.contains("\"node_id\": \"" + NODE + "\"")
          && clients.contains("\"in_sync\": true") && !clients.contains("\"in_sync\": false");
    });
    // Versions come from content, equal on every replica: the client re-requested with what it
    // holds, and the replica it moved to sent nothing at all. Its view is unchanged: the same
    // versions, the same last_updated, all ACKED.
    assertThat(responsesSent(next)).as("responses sent by the surviving replica").isZero();
    assertThat(csds.resources(client)).containsExactlyInAnyOrderElementsOf(before);
    for (int i = 0; i < 20; i++) {
      assertThat(client.hello()).isEqualTo("v1");
    }

    // A change applied after the loss reaches the client through the surviving replica.
    long applied = System.nanoTime();
    apply(etcdClient, target, Config.service("greeter", Config.toCluster("greeter-v1"))
        .cluster("greeter-v1", v1b.port()).cluster("greeter-v2", v2.port()), "replacement");
    List<String> seen = new ArrayList<>();
    Await.until(WAIT, "traffic on the replacement endpoint", () -> {
      seen.add(client.helloOrError());
      return seen.get(seen.size() - 1).equals("v1-replacement");
    });
    Measurements.record("apply after the loss -> first RPC on the new endpoint",
        System.nanoTime() - applied);
    assertThat(seen).allMatch(r -> r.equals("v1") || r.equals("v1-replacement"));
    for (int i = 0; i < 20; i++) {
      assertThat(client.hello()).isEqualTo("v1-replacement");
    }
    GenericXdsConfig eds = Await.value(WAIT, "the new endpoints ACKED", () -> {
      GenericXdsConfig r = csds.withStatus(client, Csds.EDS, "greeter-v1",
          ClientResourceStatus.ACKED);
      return r != null && !before.contains(r) ? r : null;
    });
    assertThat(eds.getVersionInfo()).isNotEmpty();
    // Exactly the one changed resource was sent, by the replica the client is on now.
    assertThat(responsesSent(next)).isEqualTo(1);
    Await.until(WAIT, "in sync again on the surviving replica", () -> {
      String clients = get(next, "/clients?node_id=" + NODE);
      return clients.contains("\"in_sync\": true") && !clients.contains("\"in_sync\": false");
    });
  }
}
