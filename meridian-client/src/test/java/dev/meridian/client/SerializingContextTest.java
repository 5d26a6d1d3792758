package dev.meridian.client;

import static dev.meridian.client.TestResources.edsCluster;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Any;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.grpc.Status;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 19: client state is touched only on the client's serializing context, and every method
 * that touches it says so at once when called from anywhere else (grpc-java's
 * throwIfNotInThisSynchronizationContext), instead of racing silently.
 */
class SerializingContextTest {
  private final FakeTransport transport = new FakeTransport();
  private final FakeScheduler clock = new FakeScheduler();
  private XdsClient client;

  @AfterEach
  void tearDown() {
    if (client != null) {
      client.close();
    }
  }

  private XdsClient client(XdsClient.Protocol protocol) {
    client = new XdsClient(Bootstrap.forServer("fake:1", Node.newBuilder().setId("n").build()),
        XdsClient.Options.defaults().withProtocol(protocol).withCallbackExecutor(Runnable::run)
            .withScheduler(clock).withRandom(() -> 0.5), transport);
    return client;
  }

  @Test
  void assertionPassesOnlyForTheContextsOwnTasks() {
    SerializingContext ctx = new SerializingContext();
    assertThatThrownBy(ctx::throwIfNotInThisContext).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("not called from the xDS client's context");
    AtomicReference<Throwable> inside = new AtomicReference<>(new AssertionError("never ran"));
    ctx.execute(() -> inside.set(catching(ctx::throwIfNotInThisContext)));
    assertThat(inside.get()).isNull();
  }

  @Test
  void anotherThreadFailsWhileTheContextIsRunning() throws Exception {
    SerializingContext ctx = new SerializingContext();
    AtomicReference<Throwable> other = new AtomicReference<>();
    ctx.execute(() -> {
      Thread t = new Thread(() -> other.set(catching(ctx::throwIfNotInThisContext)));
      t.start();
      try {
        t.join(20_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    assertThat(other.get()).isInstanceOf(IllegalStateException.class);
  }

  // Everything a stream can ask of the client fails off the context and leaves the state alone.
  @Test
  void theClientsStreamSideFailsOffTheContext() {
    XdsClient c = client(XdsClient.Protocol.SOTW);
    RecordingWatcher w = new RecordingWatcher();
    c.watch(ResourceType.CLUSTER, "a", w);
    Bootstrap.ServerInfo server = c.bootstrap().primary();
    XdsClient.StreamSide side = c.streamSide;
    DecodedResponse sotw = DecodedResponse.sotw(ResourceType.CLUSTER, "v1",
        List.of(Any.pack(edsCluster("a"))));
    DecodedResponse delta = DecodedResponse.delta(ResourceType.CLUSTER, List.of(), List.of("a"));
    Map<String, Runnable> calls = new LinkedHashMap<>();
    calls.put("subscribedTypes", () -> side.subscribedTypes(server, StreamScope.ADS));
    calls.put("interest", () -> side.interest(server, ResourceType.CLUSTER));
    calls.put("acceptedVersion", () -> side.acceptedVersion(server, ResourceType.CLUSTER));
    calls.put("heldVersions", () -> side.heldVersions(server, ResourceType.CLUSTER));
    calls.put("handleStreamReady", () -> side.handleStreamReady(server, StreamScope.ADS));
    calls.put("handleStreamClosed",
        () -> side.handleStreamClosed(server, StreamScope.ADS, Status.UNAVAILABLE, false));
    calls.put("handleSotwResponse",
        () -> side.handleSotwResponse(server, sotw, "v1", Set.of("a"), () -> { }));
    calls.put("handleDeltaResponse",
        () -> side.handleDeltaResponse(server, delta, "s1", () -> { }));
    calls.forEach((name, call) -> assertThatThrownBy(call::run).as(name)
        .isInstanceOf(IllegalStateException.class));
    assertThat(w.take()).isEmpty();
    assertThat(clock.pending()).isZero(); // no does-not-exist timer started by the ready call

    // The same response, applied on the context, is used.
    c.ctx.execute(() -> side.handleSotwResponse(server, sotw, "v1", Set.of("a"), () -> { }));
    assertThat(w.take()).containsExactly("changed:a", "processed:v1");
  }

  @ParameterizedTest
  @EnumSource(XdsClient.Protocol.class)
  void aStreamFailsOffTheContext(XdsClient.Protocol protocol) {
    XdsClient c = client(protocol);
    c.watch(ResourceType.CLUSTER, "a", new RecordingWatcher());
    Bootstrap.ServerInfo server = c.bootstrap().primary();
    ClientStream.Deps deps = new ClientStream.Deps(transport, c.bootstrap().node(), c.streamSide,
        c.streamSide, c.ctx, clock, () -> 0.5);
    ClientStream<?> s = switch (protocol) {
      case SOTW -> new SotwClientStream(server, StreamScope.ADS, deps);
      case DELTA -> new DeltaClientStream(server, StreamScope.ADS, deps);
    };
    int opened = transport.sotwCalls.size() + transport.deltaCalls.size();
    assertThatThrownBy(s::start).isInstanceOf(IllegalStateException.class);
    assertThat(transport.sotwCalls.size() + transport.deltaCalls.size()).isEqualTo(opened);

    c.ctx.execute(s::start);
    assertThat(transport.sotwCalls.size() + transport.deltaCalls.size()).isEqualTo(opened + 1);
    assertThatThrownBy(() -> s.subscriptionChanged(ResourceType.CLUSTER))
        .isInstanceOf(IllegalStateException.class);
    FakeTransport.FakeCall<?, ?> call = switch (protocol) {
      case SOTW -> transport.lastSotw();
      case DELTA -> transport.lastDelta();
    };
    assertThatThrownBy(s::shutdown).isInstanceOf(IllegalStateException.class);
    assertThat(call.cancelled).isFalse();
    c.ctx.execute(s::shutdown);
    assertThat(call.cancelled).isTrue();
  }

  private static Throwable catching(Runnable r) {
    try {
      r.run();
      return null;
    } catch (Throwable t) {
      return t;
    }
  }
}
