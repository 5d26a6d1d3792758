package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.Snapshot;
import dev.meridian.internal.protocol.XdsResource;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A config change handed to many streams from a few pool tasks (the server's fan-out). */
class DiscoveryHubFanOutTest {
  private final ExecutorService pool = Executors.newFixedThreadPool(2);

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  static ServedConfig config(String clusterName) {
    return new ServedConfig(Snapshot.of(List.of(XdsResource.of(ResourceType.CLUSTER,
        Cluster.newBuilder().setName(clusterName).build()))), List.of());
  }

  /** Records each config it was handed, in order, and on which thread. */
  static final class Recorder implements DiscoveryHub.Listener {
    final List<ServedConfig> seen = new CopyOnWriteArrayList<>();
    final List<Thread> threads = new CopyOnWriteArrayList<>();

    @Override
    public void onConfig(ServedConfig config, Map<String, Map<ResourceType, Set<String>>> changes,
        long generation) {
      seen.add(config);
      threads.add(Thread.currentThread());
    }

    @Override
    public void onTick(ServedConfig config) {}
  }

  static List<Recorder> register(DiscoveryHub hub, int n) {
    List<Recorder> streams = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Recorder r = new Recorder();
      streams.add(r);
      hub.register(r);
    }
    return streams;
  }

  @Test
  void everyStreamGetsEachChangeOnceAndInOrderFromThePool() {
    DiscoveryHub hub = new DiscoveryHub();
    hub.fanOutOn(pool, 2);
    List<Recorder> streams = register(hub, 1000);
    ServedConfig first = config("a");
    ServedConfig second = config("b");
    hub.update(first);
    hub.update(second);
    // update() returns once every stream has the change in hand: no waiting needed here.
    for (Recorder r : streams) {
      assertThat(r.seen).containsExactly(first, second);
      assertThat(r.threads).doesNotContain(Thread.currentThread());
    }
  }

  @Test
  void fewStreamsAreHandedTheChangeFromTheUpdatingThread() {
    DiscoveryHub hub = new DiscoveryHub();
    hub.fanOutOn(pool, 2);
    Recorder r = register(hub, 1).get(0);
    ServedConfig c = config("a");
    hub.update(c);
    assertThat(r.seen).containsExactly(c);
    assertThat(r.threads).containsExactly(Thread.currentThread());
  }

  @Test
  void aShutDownPoolStillHandsEveryStreamTheChange() {
    DiscoveryHub hub = new DiscoveryHub();
    pool.shutdownNow();
    hub.fanOutOn(pool, 2);
    List<Recorder> streams = register(hub, 300);
    ServedConfig c = config("a");
    hub.update(c);
    for (Recorder r : streams) {
      assertThat(r.seen).containsExactly(c);
    }
  }
}
