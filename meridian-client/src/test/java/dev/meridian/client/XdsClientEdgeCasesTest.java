package dev.meridian.client;

import static dev.meridian.client.TestResources.edsCluster;
import static dev.meridian.client.TestResources.sotw;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Less common paths: server features, disconnected subscriptions, re-entrant watchers. */
class XdsClientEdgeCasesTest {
  private final FakeTransport transport = new FakeTransport();
  private final FakeScheduler clock = new FakeScheduler();

  private XdsClient client(Bootstrap b) {
    return new XdsClient(b, XdsClient.Options.defaults().withCallbackExecutor(Runnable::run)
        .withScheduler(clock).withRandom(() -> 0.5), transport);
  }

  private static Bootstrap plain() {
    return Bootstrap.forServer("fake:1", Node.getDefaultInstance());
  }

  // gRFC A53: with ignore_resource_deletion, an LDS/CDS response omitting a resource keeps it.
  @Test
  void ignoreResourceDeletionKeepsOmittedClusters() throws Exception {
    Bootstrap b = Bootstrap.fromJson("{\"xds_servers\": [{\"server_uri\": \"fake:1\", "
        + "\"channel_creds\": [{\"type\": \"insecure\"}], "
        + "\"server_features\": [\"ignore_resource_deletion\"]}]}");
    try (XdsClient c = client(b)) {
      RecordingWatcher w = new RecordingWatcher();
      c.watchAll(ResourceType.CLUSTER, w);
      transport.lastSotw().respond(sotw(ResourceType.CLUSTER, "1", "a", edsCluster("x"), edsCluster("y")));
      transport.lastSotw().respond(sotw(ResourceType.CLUSTER, "2", "b", edsCluster("x")));
      assertThat(w.latest).containsOnlyKeys("x", "y");
    }
  }

  @Test
  void watchWhileDisconnectedIsSentOnTheNextStream() {
    try (XdsClient c = client(plain())) {
      c.watch(ResourceType.CLUSTER, "a", new RecordingWatcher());
      transport.lastSotw().fail(Status.UNAVAILABLE);
      c.watch(ResourceType.CLUSTER, "b", new RecordingWatcher());
      assertThat(transport.sotwCalls).hasSize(1);
      clock.forward(Duration.ofSeconds(1));
      assertThat(transport.sotwCalls).hasSize(2);
      assertThat(transport.lastSotw().next().getResourceNamesList()).containsExactly("a", "b");
      assertThat(transport.lastSotw().requests).isEmpty();
    }
  }

  @Test
  void unsubscribingTheLastNameSendsAnEmptyList() {
    try (XdsClient c = client(plain())) {
      Watch w = c.watch(ResourceType.ROUTE, "r", new RecordingWatcher());
      transport.lastSotw().requests.clear();
      w.cancel();
      assertThat(transport.lastSotw().next().getResourceNamesList()).isEmpty();
    }
  }

  @Test
  void aWatcherMayWatchFromItsCallback() {
    try (XdsClient c = client(plain())) {
      RecordingWatcher inner = new RecordingWatcher();
      RecordingWatcher outer = new RecordingWatcher() {
        @Override
        public synchronized void onChanged(ResourceUpdate update) {
          super.onChanged(update);
          c.watch(ResourceType.ENDPOINT, update.name(), inner);
        }
      };
      c.watch(ResourceType.CLUSTER, "a", outer);
      transport.lastSotw().respond(sotw(ResourceType.CLUSTER, "1", "n", edsCluster("a")));
      List<String> types = transport.lastSotw().requests.stream()
          .map(r -> r.getTypeUrl() + " " + r.getResourceNamesList()).toList();
      assertThat(types).contains(ResourceType.ENDPOINT.typeUrl() + " [a]");
    }
  }

  @Test
  void callbacksRunOnTheCallbackExecutorNotTheCallersThread() throws Exception {
    java.util.concurrent.ExecutorService exec = java.util.concurrent.Executors.newSingleThreadExecutor(
        r -> new Thread(r, "user-callbacks"));
    try (XdsClient c = new XdsClient(plain(), XdsClient.Options.defaults()
        .withCallbackExecutor(exec).withScheduler(clock), transport)) {
      RecordingWatcher w = new RecordingWatcher();
      c.watch(ResourceType.CLUSTER, "a", w);
      transport.lastSotw().respond(sotw(ResourceType.CLUSTER, "1", "n", edsCluster("a")));
      Await.until("the callback", () -> w.latest.containsKey("a"));
      synchronized (w) {
        assertThat(w.threads).extracting(Thread::getName).containsOnly("user-callbacks");
      }
    } finally {
      exec.shutdown();
    }
  }

  @Test
  void callbacksNeverOverlapEvenOnAPool() throws Exception {
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
    java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger overlaps = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger seen = new java.util.concurrent.atomic.AtomicInteger();
    ResourceWatcher w = new ResourceWatcher() {
      private void enter() {
        if (inside.incrementAndGet() > 1) {
          overlaps.incrementAndGet();
        }
        Thread.yield();
        inside.decrementAndGet();
        seen.incrementAndGet();
      }

      @Override
      public void onChanged(ResourceUpdate update) {
        enter();
      }

      @Override
      public void onDoesNotExist(ResourceType type, String name) {
        enter();
      }

      @Override
      public void onError(XdsError error) {
        enter();
      }
    };
    try (XdsClient c = new XdsClient(plain(), XdsClient.Options.defaults()
        .withCallbackExecutor(pool).withScheduler(clock), transport)) {
      for (int i = 0; i < 50; i++) {
        c.watch(ResourceType.CLUSTER, "c" + i, w);
      }
      io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse.Builder b =
          sotw(ResourceType.CLUSTER, "1", "n").toBuilder();
      for (int i = 0; i < 50; i++) {
        b.addResources(com.google.protobuf.Any.pack(edsCluster("c" + i)));
      }
      transport.lastSotw().respond(b.build());
      Await.until("50 callbacks", () -> seen.get() == 50);
      assertThat(overlaps.get()).isZero();
    } finally {
      pool.shutdown();
    }
  }

  @Test
  void virtualHostsNeedDelta() {
    try (XdsClient c = client(plain())) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() ->
          c.watchAll(ResourceType.VIRTUAL_HOST, new RecordingWatcher()))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Delta");
    }
  }

  @Test
  void everyShortTypeNameAndTypeUrlParses() {
    Map<String, ResourceType> names = Map.of("listeners", ResourceType.LISTENER,
        "routes", ResourceType.ROUTE, "clusters", ResourceType.CLUSTER,
        "endpoints", ResourceType.ENDPOINT, "secrets", ResourceType.SECRET,
        "runtimes", ResourceType.RUNTIME, "scoped-routes", ResourceType.SCOPED_ROUTE,
        "virtual-hosts", ResourceType.VIRTUAL_HOST, "extension-configs", ResourceType.EXTENSION_CONFIG);
    names.forEach((n, t) -> {
      assertThat(ResourceType.parse(n)).contains(t);
      assertThat(ResourceType.parse(t.typeUrl())).contains(t);
    });
  }
}
