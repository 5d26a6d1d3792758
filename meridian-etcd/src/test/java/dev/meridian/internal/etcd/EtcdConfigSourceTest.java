package dev.meridian.internal.etcd;

import static dev.meridian.internal.etcd.EtcdClients.bytes;
import static dev.meridian.internal.etcd.EtcdFixture.clusters;
import static dev.meridian.internal.etcd.EtcdFixture.load;
import static dev.meridian.internal.etcd.EtcdFixture.write;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.config.ConfigException;
import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.config.ConfigSource;
import dev.meridian.internal.config.ReferenceCheck;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.XdsResource;
import dev.meridian.testing.EtcdProcess;
import io.etcd.jetcd.Client;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replica's view of etcd (issue 21, docs/etcd.md): a linearizable load, then a watch; whole
 * transactions; the last config kept through an outage; a compacted watch replaced by a reload.
 */
class EtcdConfigSourceTest {
  @TempDir Path dir;
  /** What the source logged: the events say which way it recovered. */
  final List<String> logged = new CopyOnWriteArrayList<>();
  final java.util.logging.Logger log =
      java.util.logging.Logger.getLogger("dev.meridian.etcd.EtcdConfigSource");
  final java.util.logging.Handler capture = new java.util.logging.Handler() {
    @Override
    public void publish(java.util.logging.LogRecord r) {
      logged.add(r.getMessage());
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  @org.junit.jupiter.api.BeforeEach
  void captureLogs() {
    log.addHandler(capture);
  }

  @org.junit.jupiter.api.AfterEach
  void releaseLogs() {
    log.removeHandler(capture);
  }

  long count(String event) {
    return logged.stream().filter(m -> m.startsWith(event + " ")).count();
  }

  /** What a replica's sink saw. */
  static final class Sink implements ConfigSource.Sink {
    final List<ServedConfig> applied = new CopyOnWriteArrayList<>();
    final List<ConfigException> failed = new CopyOnWriteArrayList<>();

    @Override
    public void apply(ConfigLoader.Loaded loaded, long revision) {
      applied.add(loaded.config());
    }

    @Override
    public void failed(ConfigException problems) {
      failed.add(problems);
    }

    ServedConfig last() {
      return applied.isEmpty() ? null : applied.get(applied.size() - 1);
    }

    int port(String cluster) {
      ServedConfig c = last();
      XdsResource r = c == null ? null : c.defaults().get(ResourceType.ENDPOINT).get(cluster);
      return r == null ? -1 : ((io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment)
          r.message()).getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress()
          .getSocketAddress().getPortValue();
    }
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 30 s: " + what);
      }
      Thread.sleep(10); // polling a condition, bounded above
    }
  }

  void apply(Client client, EtcdTarget target, String yaml, String name) throws Exception {
    new EtcdApply(client, target).apply(load(write(dir.resolve(name), "c.yaml", yaml)), true,
        false, ReferenceCheck.REJECT);
  }

  @Test
  void replicaServesEveryTransactionAsOneChange() throws Exception {
    try (EtcdProcess etcd = EtcdProcess.start(); Client client = EtcdFixture.client(etcd.endpoints())) {
      EtcdTarget target = EtcdTarget.parse(etcd.url("/meridian"), null);
      apply(client, target, clusters(50, 80), "a");
      Sink sink = new Sink();
      try (EtcdConfigSource source = new EtcdConfigSource(target, new ConfigLoader()).connect()) {
        source.start(sink);
        await("first load", () -> sink.port("c49") == 80);
        assertThat(source.status().connected()).isTrue();
        assertThat(source.status().revision()).isPositive();

        for (int round = 81; round < 86; round++) {
          apply(client, target, clusters(50, round), "r" + round);
        }
        await("every round", () -> sink.port("c0") == 85);
      }
      // Each config a replica served is one whole transaction: all 50 endpoints at one port.
      for (ServedConfig c : sink.applied) {
        assertThat(c.defaults().get(ResourceType.ENDPOINT).list().stream()
            .map(r -> r.message().toString().replaceAll("(?s).*port_value: (\\d+).*", "$1"))
            .distinct()).hasSize(1);
      }
    }
  }

  @Test
  void etcdOutageKeepsTheLastConfigAndResumesFromItsRevision() throws Exception {
    try (EtcdProcess etcd = EtcdProcess.start(); Client client = EtcdFixture.client(etcd.endpoints())) {
      EtcdTarget target = EtcdTarget.parse(etcd.url("/meridian"), null);
      apply(client, target, clusters(3, 80), "a");
      Sink sink = new Sink();
      try (EtcdConfigSource source = new EtcdConfigSource(target, new ConfigLoader()).connect()) {
        source.start(sink);
        await("first load", () -> sink.port("c0") == 80);
        long revision = source.status().revision();

        etcd.stop(etcd.members().get(0));
        await("the outage noticed", () -> !source.status().connected());
        assertThat(source.status().loaded()).isTrue();
        assertThat(source.status().revision()).isEqualTo(revision);
        assertThat(source.status().detail()).isNotBlank();
        assertThat(sink.port("c0")).isEqualTo(80);

        etcd.restart(etcd.members().get(0));
        await("reconnected", () -> source.status().connected());
        int before = sink.applied.size();
        apply(client, target, clusters(3, 81), "b");
        await("the change after the outage", () -> sink.port("c0") == 81);
        assertThat(sink.applied.size() - before).isEqualTo(1);
        // Resumed by watching from its revision: the prefix was read whole once, at the start.
        assertThat(count("store_load")).isEqualTo(1);
      }
    }
  }

  @Test
  void changesMadeThroughAnotherMemberDuringAnOutageArriveAfterCompaction() throws Exception {
    try (EtcdProcess etcd = EtcdProcess.cluster(3, null)) {
      EtcdProcess.Member only = etcd.members().get(0);
      // The replica knows one member; the operator writes through another.
      EtcdTarget replica = EtcdTarget.parse("etcd://" + only.endpoint() + "/meridian", null);
      EtcdTarget operator = EtcdTarget.parse("etcd://" + etcd.members().get(1).endpoint()
          + "/meridian", null);
      try (Client client = EtcdFixture.client(etcd.members().get(1).endpoint())) {
        apply(client, operator, clusters(3, 80), "a");
        Sink sink = new Sink();
        try (EtcdConfigSource source = new EtcdConfigSource(replica, new ConfigLoader()).connect()) {
          source.start(sink);
          await("first load", () -> sink.port("c0") == 80);

          etcd.stop(only);
          await("the outage noticed", () -> !source.status().connected());
          apply(client, operator, clusters(3, 81), "b");
          apply(client, operator, clusters(2, 82), "c");
          long now = client.getKVClient().get(bytes("/")).get().getHeader().getRevision();
          client.getKVClient().compact(now).get();

          etcd.restart(only);
          await("caught up", () -> sink.port("c0") == 82);
          // The watch resumed from a compacted revision, so the prefix was read whole again.
          assertThat(count("store_watch_compacted")).isEqualTo(1);
          assertThat(count("store_load")).isEqualTo(2);
          assertThat(sink.last().defaults().get(ResourceType.CLUSTER).get("c2")).isNull();
          await("connected", () -> source.status().connected());
          assertThat(source.status().revision()).isGreaterThanOrEqualTo(now);
        }
      }
    }
  }

  @Test
  void anEmptyPrefixIsNotAConfigUntilSomethingIsApplied() throws Exception {
    try (EtcdProcess etcd = EtcdProcess.start(); Client client = EtcdFixture.client(etcd.endpoints())) {
      EtcdTarget target = EtcdTarget.parse(etcd.url("/nothing-yet"), null);
      Sink sink = new Sink();
      try (EtcdConfigSource source = new EtcdConfigSource(target, new ConfigLoader()).connect()) {
        source.start(sink);
        await("read", () -> source.status().detail() != null
            && source.status().detail().contains("nothing is stored under /nothing-yet/"));
        assertThat(source.status().loaded()).isFalse();
        assertThat(sink.applied).isEmpty();

        apply(client, target, clusters(1, 80), "a");
        await("the first config", () -> sink.port("c0") == 80);
        assertThat(source.status().loaded()).isTrue();
        assertThat(source.status().detail()).isNull();
      }
    }
  }

  @Test
  void aConfigLargerThanGrpcsDefaultMessageLimitIsReadAndWatched() throws Exception {
    // 300 clusters of ~16 KiB each: ~5 MiB in one read and in one transaction's watch response.
    String filler = "x".repeat(16 * 1024);
    java.util.function.IntFunction<String> config = port -> {
      StringBuilder b = new StringBuilder("resources:\n");
      for (int i = 0; i < 300; i++) {
        b.append(EtcdFixture.cluster("c" + i).replace("type: EDS",
            "type: EDS\n    metadata: { filter_metadata: { x: { f: " + filler + " } } }"))
            .append(EtcdFixture.endpoints("c" + i, port));
      }
      return b.toString();
    };
    try (EtcdProcess etcd = EtcdProcess.start(); Client client = EtcdFixture.client(etcd.endpoints())) {
      EtcdTarget target = EtcdTarget.parse(etcd.url("/meridian"), null);
      try (Client big = EtcdClients.connect(target)) {
        new EtcdApply(big, target).apply(load(write(dir.resolve("a"), "c.yaml",
            config.apply(80))), true, false, ReferenceCheck.REJECT);
        Sink sink = new Sink();
        try (EtcdConfigSource source = new EtcdConfigSource(target, new ConfigLoader()).connect()) {
          source.start(sink);
          await("the large config", () -> sink.port("c299") == 80);

          // Every cluster changed in one transaction: one large watch response.
          new EtcdApply(big, target).apply(load(write(dir.resolve("b"), "c.yaml",
              config.apply(81).replace(filler, filler.replace('x', 'y')))), true, false,
              ReferenceCheck.REJECT);
          await("the large change", () -> sink.port("c299") == 81);
          assertThat(count("store_load")).isEqualTo(1);
        }
      }
    }
  }

  @Test
  void anInvalidStoredConfigKeepsTheLastGoodOneAndSaysWhy() throws Exception {
    try (EtcdProcess etcd = EtcdProcess.start(); Client client = EtcdFixture.client(etcd.endpoints())) {
      EtcdTarget target = EtcdTarget.parse(etcd.url("/meridian"), null);
      apply(client, target, clusters(1, 80), "a");
      Sink sink = new Sink();
      try (EtcdConfigSource source = new EtcdConfigSource(target, new ConfigLoader()).connect()) {
        source.start(sink);
        await("first load", () -> sink.port("c0") == 80);
        String key = target.layout().resourceKey("default", ResourceType.CLUSTER, "c0");

        client.getKVClient().put(bytes(key), bytes("{\"@type\": \"nonsense\"")).get();
        await("the problem reported", () -> !sink.failed.isEmpty());
        assertThat(sink.failed.get(0).getMessage()).contains(key);
        assertThat(source.status().detail()).contains(key);
        assertThat(sink.port("c0")).isEqualTo(80);

        apply(client, target, clusters(1, 81), "b");
        await("repaired", () -> sink.port("c0") == 81);
        assertThat(source.status().detail()).isNull();
      }
    }
  }
}
