package dev.meridian.internal.etcd;

import static dev.meridian.internal.etcd.EtcdClients.bytes;
import static dev.meridian.internal.etcd.EtcdClients.string;
import static dev.meridian.internal.etcd.EtcdFixture.clusters;
import static dev.meridian.internal.etcd.EtcdFixture.load;
import static dev.meridian.internal.etcd.EtcdFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.config.ReferenceCheck;
import dev.meridian.internal.etcd.EtcdApply.Kind;
import dev.meridian.xds.ResourceType;
import dev.meridian.testing.EtcdProcess;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code meridian apply} and {@code export} against a real etcd (issue 21, docs/etcd.md): one
 * transaction, validated as serve would load it, guarded against concurrent writers.
 */
class EtcdApplyTest {
  static EtcdProcess etcd;
  static Client client;
  @TempDir Path dir;
  EtcdTarget target;

  @BeforeAll
  static void startEtcd() {
    etcd = EtcdProcess.start();
    client = EtcdFixture.client(etcd.endpoints());
  }

  @AfterAll
  static void stopEtcd() {
    client.close();
    etcd.close();
  }

  @org.junit.jupiter.api.BeforeEach
  void prefixPerTest(TestInfo info) {
    target = EtcdTarget.parse(etcd.url("/t/" + info.getTestMethod().orElseThrow().getName()),
        null);
  }

  EtcdApply.Result apply(Path files, boolean prune, boolean dryRun) throws Exception {
    return new EtcdApply(client, target).apply(load(files), prune, dryRun, ReferenceCheck.REJECT);
  }

  Map<String, KeyValue> stored() throws Exception {
    Map<String, KeyValue> out = new TreeMap<>();
    for (KeyValue kv : client.getKVClient().get(bytes(target.prefix() + "/"),
        GetOption.builder().isPrefix(true).build()).get().getKvs()) {
      out.put(string(kv.getKey()), kv);
    }
    return out;
  }

  long revision() throws Exception {
    return client.getKVClient().get(bytes("/")).get().getHeader().getRevision();
  }

  @Test
  void applyWritesEveryChangeInOneTransaction() throws Exception {
    EtcdApply.Result r = apply(write(dir, "c.yaml", clusters(3, 80) + """
        groups:
          - name: canary
            match: { node_id: "canary-*" }
            resources:
        """ + (EtcdFixture.cluster("only-canary")
            + EtcdFixture.endpoints("only-canary", 80)).indent(4)), false, false);

    assertThat(r.written()).isTrue();
    assertThat(r.count(Kind.CREATED)).isEqualTo(9); // 3+1 clusters, 3+1 endpoints, 1 group
    Map<String, KeyValue> kvs = stored();
    assertThat(kvs).containsKeys(target.prefix() + "/resources/default/clusters/c0",
        target.prefix() + "/resources/default/endpoints/c2",
        target.prefix() + "/groups/canary",
        target.prefix() + "/resources/canary/clusters/only-canary");
    // One transaction: every key was written at the same revision.
    assertThat(kvs.values().stream().map(KeyValue::getModRevision).distinct()).hasSize(1);
    // What is stored is what serve loads: the same resources, the same versions.
    ConfigLoader.Loaded fromStore = new ConfigLoader().loadStored(target.layout(),
        strings(kvs));
    assertThat(fromStore.config().snapshot("default").get(ResourceType.CLUSTER).versionMap())
        .isEqualTo(load(dir.resolve("c.yaml")).snapshot("default").get(ResourceType.CLUSTER)
            .versionMap());
  }

  /**
   * A stored value that breaks one of Envoy's rules (written with --validation off, or by an
   * older Meridian) makes the resulting config one serve would refuse: apply writes nothing and
   * names the key, the field and the rule; with the rules off it applies.
   */
  @Test
  void applyRefusesAResultThatBreaksOneOfEnvoysRulesNamingTheStoredKey() throws Exception {
    Path bad = write(dir.resolve("old"), "c.yaml", "resources:\n" + EtcdFixture.endpoints("e", 99999));
    new EtcdApply(client, target, dev.meridian.internal.config.RuleCheck.OFF).apply(
        new ConfigLoader(dev.meridian.internal.config.RuleCheck.OFF).load(bad).config(), false,
        false, ReferenceCheck.WARN);
    long before = revision();
    Path more = write(dir.resolve("new"), "c.yaml", clusters(1, 80));
    assertThatThrownBy(() -> apply(more, false, false)).isInstanceOf(EtcdApply.Invalid.class)
        .hasMessageContaining(target.prefix() + "/resources/default/endpoints/e:1:")
        .hasMessageContaining("ClusterLoadAssignment e: endpoints[0].lb_endpoints[0].endpoint"
            + ".address.socket_address.port_value: 99999")
        .hasMessageContaining("(uint32.lte)");
    assertThat(revision()).isEqualTo(before);
    assertThat(new EtcdApply(client, target, dev.meridian.internal.config.RuleCheck.OFF)
        .apply(load(more), false, false, ReferenceCheck.WARN).written()).isTrue();
  }

  @Test
  void applyOfTheSameFilesAgainChangesNothing() throws Exception {
    Path f = write(dir, "c.yaml", clusters(2, 80));
    apply(f, false, false);
    long before = revision();

    EtcdApply.Result again = apply(f, false, false);

    assertThat(again.written()).isFalse();
    assertThat(again.count(Kind.UNCHANGED)).isEqualTo(4);
    assertThat(revision()).isEqualTo(before);
  }

  @Test
  void oneEndpointEditIsOneKeyWrite() throws Exception {
    apply(write(dir, "c.yaml", clusters(3, 80)), false, false);
    String edited = clusters(3, 80).replaceFirst("(cluster_name: c1\\n(?:.*\\n){2}.*port_value: )80",
        "$181");
    EtcdApply.Result r = apply(write(dir, "c.yaml", edited), false, false);

    assertThat(r.changes().stream().filter(c -> c.kind() == Kind.UPDATED).map(c -> c.what()))
        .containsExactly("endpoints default/c1");
    assertThat(r.count(Kind.UNCHANGED)).isEqualTo(5);
  }

  @Test
  void invalidApplyWritesNothing() throws Exception {
    apply(write(dir, "c.yaml", clusters(1, 80)), false, false);
    long before = revision();
    // A route to a cluster that exists nowhere: serve's reference check would reject it.
    Path bad = write(dir.resolve("bad"), "c.yaml", clusters(1, 80) + """
          - "@type": type.googleapis.com/envoy.config.route.v3.RouteConfiguration
            name: r
            virtual_hosts:
              - name: v
                domains: ["*"]
                routes: [{ match: { prefix: "/" }, route: { cluster: missing } }]
        """);

    assertThatThrownBy(() -> apply(bad, false, false))
        .isInstanceOf(EtcdApply.Invalid.class).hasMessageContaining("missing");
    assertThat(revision()).isEqualTo(before);
  }

  @Test
  void applyValidatesTheConfigThatWouldResultNotOnlyTheFiles() throws Exception {
    // Stored: an EDS cluster and its endpoints. Pruning with files that keep only the cluster
    // would leave it without endpoints: a dangling reference serve would reject.
    apply(write(dir, "c.yaml", clusters(1, 80)), false, false);
    long before = revision();
    Path onlyCluster = write(dir.resolve("b"), "c.yaml", "resources:\n"
        + EtcdFixture.cluster("c0"));

    assertThatThrownBy(() -> apply(onlyCluster, true, false))
        .isInstanceOf(EtcdApply.Invalid.class).hasMessageContaining("c0");
    assertThat(revision()).isEqualTo(before);
    // Without --prune the endpoints stay, and the same files apply cleanly.
    EtcdApply.Result kept = apply(onlyCluster, false, false);
    assertThat(kept.written()).isFalse();
    assertThat(kept.changes()).extracting(EtcdApply.Change::what)
        .containsExactly("clusters default/c0");
  }

  @Test
  void pruneDeletesWhatTheFilesNoLongerHave() throws Exception {
    apply(write(dir, "c.yaml", clusters(3, 80)), false, false);
    Path fewer = write(dir.resolve("b"), "c.yaml", clusters(2, 80));

    EtcdApply.Result kept = apply(fewer, false, false);
    assertThat(kept.count(Kind.DELETED)).isZero();
    assertThat(stored()).containsKey(target.prefix() + "/resources/default/clusters/c2");

    EtcdApply.Result pruned = apply(fewer, true, false);
    assertThat(pruned.changes().stream().filter(c -> c.kind() == Kind.DELETED).map(c -> c.what()))
        .containsExactly("clusters default/c2", "endpoints default/c2");
    assertThat(stored()).doesNotContainKey(target.prefix() + "/resources/default/clusters/c2");
  }

  @Test
  void dryRunReportsTheDiffAndWritesNothing() throws Exception {
    apply(write(dir, "c.yaml", clusters(1, 80)), false, false);
    long before = revision();

    EtcdApply.Result r = apply(write(dir.resolve("b"), "c.yaml", clusters(2, 81)), true, true);

    assertThat(r.written()).isFalse();
    assertThat(r.count(Kind.CREATED)).isEqualTo(2);
    assertThat(r.count(Kind.UPDATED)).isEqualTo(1);
    assertThat(revision()).isEqualTo(before);
  }

  @Test
  void exportThenApplyOfItsOutputChangesNothing() throws Exception {
    Path f = write(dir, "c.yaml", clusters(2, 80) + """
          - "@type": type.googleapis.com/envoy.service.discovery.v3.Resource
            ttl: 30s
            aliases: [ "alias-a" ]
            resource:
              "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
              name: with-ttl
              connect_timeout: 0.25s
              circuit_breakers: { thresholds: [{ max_connections: 100 }] }
              per_connection_buffer_limit_bytes: 32768
              alt_stat_name: "Null"
              metadata: { filter_metadata: { x: { n: 1.5, big: 12345678901, s: "yes", t: "~",
                u: "True", v: "0x1F", w: ".NaN", y: "+12", z: "NULL" } } }
        groups:
          - name: zeta
            match: { node_id: "z-*" }
          - name: alpha
            match: { node_cluster: "a", identity: "spiffe://example.org/*" }
        secret_access:
          - secrets: "tls-*"
            identities: [ "spiffe://example.org/ns/a/*" ]
        """);
    apply(f, false, false);
    for (EtcdExport.Format format : EtcdExport.Format.values()) {
      String exported = new EtcdExport(client, target).export(format);
      Path out = write(dir.resolve(format.name()), "exported."
          + (format == EtcdExport.Format.JSON ? "json" : "yaml"), exported);

      EtcdApply.Result r = apply(out, true, false);

      assertThat(r.written()).as(format + ":\n" + exported).isFalse();
      assertThat(r.changes()).allMatch(c -> c.kind() == Kind.UNCHANGED);
      // Groups keep their order (zeta before alpha: the first match wins).
      assertThat(exported.indexOf("zeta")).isLessThan(exported.indexOf("alpha"));
    }
  }

  @Test
  void theSameResourceWithItsKeysInAnotherOrderIsUnchanged() throws Exception {
    apply(write(dir, "c.yaml", "resources:\n" + EtcdFixture.cluster("c0")
        .replace("type: EDS", "type: EDS\n    metadata: { filter_metadata: { x: { b: 1, a: 2 } } }")
        + EtcdFixture.endpoints("c0", 80)), false, false);
    Path json = write(dir.resolve("j"), "c.json", """
        {"resources": [
          {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "c0",
           "metadata": {"filter_metadata": {"x": {"a": 2, "b": 1}}}, "connect_timeout": "1s",
           "type": "EDS", "eds_cluster_config": {"eds_config": {"ads": {}}}},
          {"@type": "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
           "cluster_name": "c0", "endpoints": [{"lb_endpoints": [{"endpoint": {"address":
           {"socket_address": {"address": "10.0.0.1", "port_value": 80}}}}]}]}]}
        """);

    assertThat(apply(json, true, false).changes()).allMatch(c -> c.kind() == Kind.UNCHANGED);
  }

  @Test
  void groupsKeepTheirPrecedenceAcrossPartialAppliesAndExports() throws Exception {
    String b = "groups:\n  - name: b\n    match: { node_id: \"x-*\" }\n";
    String a = "groups:\n  - name: a\n    match: { node_id: \"x-1\" }\n";
    apply(write(dir.resolve("1"), "c.yaml", clusters(1, 80) + b + a.substring("groups:\n".length())),
        false, false);
    // Only group a, unchanged, without --prune: b is still tried first.
    EtcdApply.Result partial = apply(write(dir.resolve("2"), "c.yaml", clusters(1, 80) + a),
        false, false);
    assertThat(partial.written()).isFalse();
    assertThat(new ConfigLoader().loadStored(target.layout(), strings(stored())).config()
        .groups()).extracting(g -> g.name()).containsExactly("b", "a");
    // A new group comes after the stored ones; export then apply --prune rewrites nothing.
    apply(write(dir.resolve("3"), "c.yaml", clusters(1, 80)
        + "groups:\n  - name: c\n    match: { node_cluster: \"z\" }\n"), false, false);
    String exported = new EtcdExport(client, target).export(EtcdExport.Format.YAML);
    assertThat(exported.indexOf("- name: b")).isLessThan(exported.indexOf("- name: a"));
    assertThat(exported.indexOf("- name: a")).isLessThan(exported.indexOf("- name: c"));
    assertThat(apply(write(dir.resolve("4"), "c.yaml", exported), true, false).changes())
        .allMatch(c -> c.kind() == Kind.UNCHANGED);
    // Reordering is a change: with --prune the files' order wins.
    apply(write(dir.resolve("5"), "c.yaml", clusters(1, 80) + a
        + "  - name: b\n    match: { node_id: \"x-*\" }\n"), true, false);
    assertThat(new ConfigLoader().loadStored(target.layout(), strings(stored())).config()
        .groups()).extracting(g -> g.name()).containsExactly("a", "b");
  }

  @Test
  void concurrentAppliesLoseNoUpdate() throws Exception {
    apply(write(dir, "base.yaml", clusters(1, 80)), false, false);
    int writers = 4;
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    try {
      List<Future<EtcdApply.Result>> results = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        // Each writer adds clusters of its own and rewrites the shared c0 endpoints.
        StringBuilder own = new StringBuilder(clusters(1, 9000 + w));
        for (int i = 0; i < 5; i++) {
          own.append(EtcdFixture.cluster("w" + w + "-" + i))
              .append(EtcdFixture.endpoints("w" + w + "-" + i, 80));
        }
        Path f = write(dir.resolve("w" + w), "c.yaml", own.toString());
        results.add(pool.submit((Callable<EtcdApply.Result>) () -> apply(f, false, false)));
      }
      for (Future<EtcdApply.Result> r : results) {
        assertThat(r.get().written()).isTrue();
      }
    } finally {
      pool.shutdownNow();
    }
    Map<String, KeyValue> kvs = stored();
    for (int w = 0; w < writers; w++) {
      for (int i = 0; i < 5; i++) {
        assertThat(kvs).containsKey(target.prefix() + "/resources/default/clusters/w" + w + "-" + i);
      }
    }
    assertThat(string(kvs.get(target.prefix() + "/resources/default/endpoints/c0").getValue()))
        .containsPattern("\"port_value\":90[0-3]");
  }

  static Map<String, String> strings(Map<String, KeyValue> kvs) {
    Map<String, String> out = new TreeMap<>();
    kvs.forEach((k, v) -> out.put(k, string(v.getValue())));
    return out;
  }
}
