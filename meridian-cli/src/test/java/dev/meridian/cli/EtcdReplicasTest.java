package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.etcd.EtcdConfigSource;
import dev.meridian.internal.etcd.EtcdTarget;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.server.MeridianServer;
import dev.meridian.testing.EtcdProcess;
import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Replicas on etcd end to end (issue 21, docs/etcd.md): {@code meridian apply} and
 * {@code export} as a user runs them, and Meridian servers serving from etcd to xDS clients.
 */
class EtcdReplicasTest {
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

  record Run(int code, String out, String err) {}

  Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int code = cl.execute(args);
    return new Run(code, out.toString(), err.toString());
  }

  static String config(int clusters, int port) {
    StringBuilder b = new StringBuilder("resources:\n");
    for (int i = 0; i < clusters; i++) {
      b.append("""
            - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
              name: c%d
              type: EDS
              eds_cluster_config: { eds_config: { ads: {} } }
            - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
              cluster_name: c%d
              endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: 10.0.0.1, port_value: %d } } } }] }]
          """.formatted(i, i, port));
    }
    return b.toString();
  }

  Path file(String name, String yaml) throws Exception {
    Path f = dir.resolve(name);
    Files.writeString(f, yaml);
    return f;
  }

  MeridianServer replica(String url) throws Exception {
    return replica(url, (String) null);
  }

  MeridianServer replica(String url, String id) throws Exception {
    return replica(url, o -> o.withControlPlaneId(id));
  }

  MeridianServer replica(String url,
      java.util.function.UnaryOperator<MeridianServer.Options> tweak) throws Exception {
    EtcdConfigSource store = new EtcdConfigSource(EtcdTarget.parse(url, null), new ConfigLoader())
        .connect();
    MeridianServer s = new MeridianServer(tweak.apply(new MeridianServer.Options(null,
        "127.0.0.1", 0, 0, 1000)), store);
    open.add(s::close);
    return s.start();
  }

  ManagedChannel channel(MeridianServer s) {
    ManagedChannel c = ManagedChannelBuilder.forAddress("127.0.0.1", s.xdsPort()).usePlaintext()
        .build();
    open.add(c::shutdownNow);
    return c;
  }

  static int port(ClusterLoadAssignment cla) {
    return cla.getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress().getSocketAddress()
        .getPortValue();
  }

  static int port(DiscoveryResponse r) throws Exception {
    return port(r.getResources(0).unpack(ClusterLoadAssignment.class));
  }

  static HttpResult get(MeridianServer s, String path) throws Exception {
    HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + s.httpPort() + path)
        .toURL().openConnection();
    int code = c.getResponseCode();
    String body = new String((code < 400 ? c.getInputStream() : c.getErrorStream()).readAllBytes());
    return new HttpResult(code, body);
  }

  record HttpResult(int code, String body) {}

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 30 s: " + what);
      }
      Thread.sleep(20); // polling a condition, bounded above
    }
  }

  @Test
  void applyReachesEveryReplicaAndEveryReplicasClients() throws Exception {
    EtcdProcess etcd = keep(EtcdProcess.start());
    String url = etcd.url("/meridian");
    Run first = run("apply", "--config", url, "-f", file("a.yaml", config(3, 80)).toString());
    assertThat(first.code()).as(first.err()).isZero();
    assertThat(first.out()).contains("created   clusters default/c0")
        .contains("6 created, 0 updated, 0 deleted, 0 unchanged (one transaction, revision ");

    List<RawXdsClient.Sotw> clients = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      MeridianServer s = replica(url);
      await("replica ready", s::isReady);
      RawXdsClient.Sotw c = keep(RawXdsClient.sotwAds(channel(s), "node-" + i));
      DiscoveryResponse r = c.subscribe(ResourceType.ENDPOINT, "c1");
      assertThat(port(r)).isEqualTo(80);
      c.ack(r, "c1");
      clients.add(c);
    }

    Run edit = run("apply", "--config", url, "-f",
        file("b.yaml", config(3, 80).replaceFirst(
            "(cluster_name: c1\\n.*port_value: )80", "$181")).toString());
    assertThat(edit.out()).contains("updated   endpoints default/c1")
        .contains("0 created, 1 updated, 0 deleted, 5 unchanged");
    java.util.Set<String> versions = new java.util.HashSet<>();
    for (RawXdsClient.Sotw c : clients) {
      DiscoveryResponse r = c.take(ResourceType.ENDPOINT);
      assertThat(port(r)).isEqualTo(81);
      versions.add(r.getVersionInfo());
    }
    // Every replica serves the same version: it is the content's.
    assertThat(versions).hasSize(1);
  }

  @Test
  void invalidApplyExitsTwoAndWritesNothingAndDryRunWritesNothing() throws Exception {
    EtcdProcess etcd = keep(EtcdProcess.start());
    String url = etcd.url("/meridian");
    assertThat(run("apply", "--config", url, "-f", file("a.yaml", config(1, 80)).toString())
        .code()).isZero();

    Run bad = run("apply", "--config", url, "-f", file("bad.yaml", config(1, 80) + """
          - "@type": type.googleapis.com/envoy.config.route.v3.RouteConfiguration
            name: r
            virtual_hosts: [{ name: v, domains: ["*"], routes: [{ match: { prefix: "/" }, route: { cluster: nowhere } }] }]
        """).toString());
    assertThat(bad.code()).isEqualTo(2);
    assertThat(bad.err()).contains("nothing written").contains("nowhere");

    Run dry = run("apply", "--config", url, "--dry-run", "--prune", "--allow-empty", "-f",
        file("none.yaml", "resources: []\n").toString());
    assertThat(dry.code()).isZero();
    assertThat(dry.out()).contains("deleted   clusters default/c0")
        .contains("0 created, 0 updated, 2 deleted, 0 unchanged (dry run: nothing written)");

    Run export = run("export", "--config", url);
    assertThat(export.code()).isZero();
    assertThat(export.out()).contains("name: c0").doesNotContain("nowhere");
    Run again = run("apply", "--config", url, "--prune", "-f",
        file("exported.yaml", export.out()).toString());
    assertThat(again.out()).contains("0 created, 0 updated, 0 deleted, 2 unchanged");
    Run json = run("export", "--config", url, "-o", "json");
    assertThat(run("apply", "--config", url, "--prune", "-f",
        file("exported.json", json.out()).toString()).out())
        .contains("0 created, 0 updated, 0 deleted, 2 unchanged");
  }

  @Test
  void applyPruneRefusesToEmptyThePrefixWithoutAllowEmpty() throws Exception {
    EtcdProcess etcd = keep(EtcdProcess.start());
    String url = etcd.url("/meridian");
    assertThat(run("apply", "--config", url, "-f", file("a.yaml", config(2, 80)).toString())
        .code()).isZero();
    // An empty file (: > empty.yaml), a blank one, one with no resources; a dry run too.
    for (String empty : List.of("", " \n\n", "resources: []\n")) {
      for (boolean dryRun : new boolean[] {false, true}) {
        List<String> args = new ArrayList<>(List.of("apply", "--config", url, "--prune", "-f",
            file("empty.yaml", empty).toString()));
        if (dryRun) {
          args.add("--dry-run");
        }
        Run r = run(args.toArray(String[]::new));
        assertThat(r.code()).as("%s, dry run %s: %s", empty, dryRun, r.err()).isEqualTo(2);
        assertThat(r.err()).contains("meridian: the apply would empty what is stored, nothing "
                + "written (--allow-empty writes it):", "  the whole config: all 4 resources",
            "  CDS: all 2 (c0, c1)", "  EDS: all 2 (c0, c1)");
        assertThat(r.out()).isEmpty();
      }
    }
    // Every cluster pruned, their endpoints kept: a type emptied is refused too.
    String endpointsOnly = config(2, 80).replaceAll(
        "(?m)^  - \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster\n(    .*\n)*", "");
    Run clusters = run("apply", "--config", url, "--prune", "-f",
        file("endpoints.yaml", endpointsOnly).toString());
    assertThat(clusters.code()).as(clusters.err()).isEqualTo(2);
    assertThat(clusters.err()).contains("  CDS: all 2 (c0, c1)").doesNotContain("whole config");

    Run export = run("export", "--config", url);
    assertThat(export.out()).as("nothing written").contains("name: c0", "name: c1");
  }

  /**
   * Every key under the prefix deleted (here by apply --prune --allow-empty) is held by a replica,
   * which keeps serving its config, and applied by one that runs with --allow-emptying; applying
   * the config again is acknowledged by the first as a recovery.
   */
  @Test
  void anEmptiedPrefixIsHeldUnlessTheReplicaAllowsEmptyingAndRestoringItIsARecovery()
      throws Exception {
    EtcdProcess etcd = keep(EtcdProcess.start());
    String url = etcd.url("/meridian");
    Path good = file("a.yaml", config(2, 80));
    assertThat(run("apply", "--config", url, "-f", good.toString()).code()).isZero();
    List<String> logged = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.logging.Logger server = java.util.logging.Logger.getLogger("dev.meridian.server");
    java.util.logging.Handler capture = new java.util.logging.Handler() {
      @Override public void publish(java.util.logging.LogRecord r) {
        logged.add(new java.util.logging.SimpleFormatter().formatMessage(r));
      }

      @Override public void flush() {}

      @Override public void close() {}
    };
    server.addHandler(capture);
    // Other tests of this JVM set log levels (serve --log-level): the INFO lines are wanted here.
    java.util.logging.Level level = server.getLevel();
    server.setLevel(java.util.logging.Level.INFO);
    open.add(() -> {
      server.removeHandler(capture);
      server.setLevel(level);
    });
    MeridianServer holding = replica(url, o -> o);
    MeridianServer allowing = replica(url, o -> o.withAllowEmptying(true));
    await("replicas ready", () -> holding.isReady() && allowing.isReady());
    RawXdsClient.Sotw envoy = keep(RawXdsClient.sotwAds(channel(holding), "envoy-a"));
    envoy.ack(envoy.subscribe(ResourceType.CLUSTER));

    Run emptied = run("apply", "--config", url, "--prune", "--allow-empty", "-f",
        file("empty.yaml", "").toString());
    assertThat(emptied.code()).as(emptied.err()).isZero();
    assertThat(emptied.out()).contains("0 created, 0 updated, 4 deleted, 0 unchanged");

    await("held", () -> holding.hub().reloads().state()
        == dev.meridian.internal.server.ReloadStatus.Result.HELD);
    assertThat(holding.hub().current().resourceCount()).isEqualTo(4);
    envoy.expectNoResponse();
    com.google.gson.JsonObject status = com.google.gson.JsonParser.parseString(
        get(holding, "/status").body()).getAsJsonObject();
    assertThat(status.get("config_state").getAsString()).isEqualTo("held");
    assertThat(status.getAsJsonObject("last_held_reload").getAsJsonArray("removes").toString())
        .contains("the whole config: all 4 resources");
    assertThat(status.getAsJsonObject("config_source").get("detail").getAsString())
        .contains("is held: it would empty what is served");
    assertThat(get(holding, "/metrics").body())
        .contains("meridian_config_reloads_total{result=\"held\"} 1.0");
    assertThat(logged).filteredOn(l -> l.startsWith("config_reload result=held")).singleElement()
        .asString().startsWith("config_reload result=held reason=emptying source=" + url
            + " revision=").contains("removes=\"the whole config: all 4 resources;");
    await("applied where allowed", () -> allowing.hub().current().resourceCount() == 0);
    assertThat(allowing.hub().reloads().last().result().label()).isEqualTo("ok");

    assertThat(run("apply", "--config", url, "-f", good.toString()).code()).isZero();
    await("recovered", () -> holding.hub().reloads().last().result().label()
        .equals("recovered"));
    status = com.google.gson.JsonParser.parseString(get(holding, "/status").body())
        .getAsJsonObject();
    assertThat(status.get("config_state").getAsString()).isEqualTo("ok");
    assertThat(status.getAsJsonObject("config_source").get("detail").isJsonNull()).isTrue();
    assertThat(logged).filteredOn(l -> l.startsWith("config_reload result=recovered"))
        .singleElement().asString().startsWith("config_reload result=recovered was=held source=");
    await("served again where allowed", () -> allowing.hub().current().resourceCount() == 4);
  }

  @Test
  void replicaIsNotReadyAndRefusesStreamsUntilItsFirstConfig() throws Exception {
    EtcdProcess etcd = keep(EtcdProcess.start());
    String url = etcd.url("/meridian");
    etcd.stop(etcd.members().get(0));
    MeridianServer s = replica(url);

    HttpResult ready = get(s, "/readyz");
    assertThat(ready.code()).isEqualTo(503);
    assertThat(ready.body()).contains("waiting for the first config from " + url);
    io.grpc.health.v1.HealthGrpc.HealthBlockingStub health =
        io.grpc.health.v1.HealthGrpc.newBlockingStub(channel(s));
    assertThat(health.check(io.grpc.health.v1.HealthCheckRequest.getDefaultInstance())
        .getStatus()).isEqualTo(io.grpc.health.v1.HealthCheckResponse.ServingStatus.NOT_SERVING);
    RawXdsClient.Sotw early = keep(RawXdsClient.sotwAds(channel(s), "early"));
    early.send(ResourceType.CLUSTER, "", "");
    assertThat(early.awaitClose().getCode()).isEqualTo(Status.Code.UNAVAILABLE);

    etcd.restart(etcd.members().get(0));
    assertThat(run("apply", "--config", url, "-f", file("a.yaml", config(1, 80)).toString())
        .code()).isZero();
    await("ready after the first load", s::isReady);
    assertThat(health.check(io.grpc.health.v1.HealthCheckRequest.getDefaultInstance())
        .getStatus()).isEqualTo(io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
    RawXdsClient.Sotw c = keep(RawXdsClient.sotwAds(channel(s), "later"));
    assertThat(c.subscribe(ResourceType.CLUSTER).getResourcesCount()).isEqualTo(1);
  }

  @Test
  void etcdOutageKeepsServingAndIsShownInReadyzClientsAndMetrics() throws Exception {
    EtcdProcess etcd = keep(EtcdProcess.start());
    String url = etcd.url("/meridian");
    run("apply", "--config", url, "-f", file("a.yaml", config(2, 80)).toString());
    MeridianServer s = replica(url);
    await("ready", s::isReady);
    assertThat(get(s, "/metrics").body()).contains("meridian_store_connected 1");

    etcd.stop(etcd.members().get(0));
    await("the outage shown", () -> {
      try {
        return get(s, "/metrics").body().contains("meridian_store_connected 0");
      } catch (Exception e) {
        return false;
      }
    });
    HttpResult ready = get(s, "/readyz");
    assertThat(ready.code()).isEqualTo(200);
    assertThat(ready.body()).contains("store unreachable since").contains("serving the last config");
    assertThat(get(s, "/clients").body()).contains("\"config_source\"")
        .contains("\"connected\": false");
    // New clients still get the last config.
    RawXdsClient.Sotw c = keep(RawXdsClient.sotwAds(channel(s), "during-outage"));
    assertThat(c.subscribe(ResourceType.CLUSTER).getResourcesCount()).isEqualTo(2);

    etcd.restart(etcd.members().get(0));
    await("reconnected", () -> {
      try {
        return get(s, "/metrics").body().contains("meridian_store_connected 1");
      } catch (Exception e) {
        return false;
      }
    });
  }

  @Test
  void sotwClientMovingToAnotherReplicaIsSentNothingItHoldsAndEachReplicaNamesItself()
      throws Exception {
    EtcdProcess etcd = keep(EtcdProcess.start());
    String url = etcd.url("/meridian");
    run("apply", "--config", url, "-f", file("a.yaml", config(20, 80)).toString());
    MeridianServer a = replica(url, "replica-a");
    MeridianServer b = replica(url, "replica-b");
    await("both ready", () -> a.isReady() && b.isReady());

    RawXdsClient.Sotw onA = RawXdsClient.sotwAds(channel(a), "mover");
    DiscoveryResponse clusters = onA.subscribe(ResourceType.CLUSTER);
    onA.ack(clusters);
    DiscoveryResponse endpoints = onA.subscribe(ResourceType.ENDPOINT, "c3", "c7");
    onA.ack(endpoints, "c3", "c7");
    assertThat(clusters.getControlPlane().getIdentifier()).isEqualTo("replica-a");
    a.close(); // the replica is lost
    onA.close();

    // Spec "ACK/NACK and resource type instance version": a reconnecting SotW client sends what
    // it holds as version_info; a replica serving the same content has nothing to send.
    RawXdsClient.Sotw onB = keep(RawXdsClient.sotwAds(channel(b), "mover"));
    onB.send(ResourceType.CLUSTER, clusters.getVersionInfo(), "");
    onB.send(ResourceType.ENDPOINT, endpoints.getVersionInfo(), "", "c3", "c7");
    onB.expectNoResponse(Duration.ofSeconds(1));

    // Only what then changes arrives, named by the replica that sent it.
    run("apply", "--config", url, "-f", file("b.yaml", config(20, 80).replaceFirst(
        "(cluster_name: c7\\n.*port_value: )80", "$181")).toString());
    DiscoveryResponse next = onB.take(ResourceType.ENDPOINT);
    assertThat(next.getResourcesCount()).isEqualTo(1);
    assertThat(port(next)).isEqualTo(81);
    assertThat(next.getControlPlane().getIdentifier()).isEqualTo("replica-b");
  }

  @Test
  void deltaClientMovingToAnotherReplicaIsSentNothingItHolds() throws Exception {
    EtcdProcess etcd = keep(EtcdProcess.start());
    String url = etcd.url("/meridian");
    run("apply", "--config", url, "-f", file("a.yaml", config(20, 80)).toString());
    MeridianServer a = replica(url);
    MeridianServer b = replica(url);
    await("both ready", () -> a.isReady() && b.isReady());

    RawXdsClient.Delta onA = RawXdsClient.deltaAds(channel(a), "mover");
    DeltaDiscoveryResponse held = onA.subscribe(ResourceType.CLUSTER);
    assertThat(held.getResourcesCount()).isEqualTo(20);
    onA.ack(held);
    a.close(); // the replica is lost
    onA.close();

    RawXdsClient.Delta onB = keep(RawXdsClient.deltaAds(channel(b), "mover"));
    DeltaDiscoveryRequest.Builder resume = DeltaDiscoveryRequest.newBuilder()
        .setTypeUrl(ResourceType.CLUSTER.typeUrl()).addResourceNamesSubscribe("*");
    held.getResourcesList().forEach(r -> resume.putInitialResourceVersions(r.getName(),
        r.getVersion()));
    onB.send(resume);
    onB.expectNoResponse(Duration.ofSeconds(1));

    // And only what then changes arrives.
    run("apply", "--config", url, "-f", file("b.yaml", config(21, 80)).toString());
    DeltaDiscoveryResponse next = onB.take(ResourceType.CLUSTER);
    assertThat(next.getResourcesList()).extracting(r -> r.getName()).containsExactly("c20");
  }
}
