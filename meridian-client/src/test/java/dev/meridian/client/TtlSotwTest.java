package dev.meridian.client;

import static dev.meridian.client.TestResources.routes;
import static dev.meridian.client.TestResources.wrapped;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Spec "TTL" in SotW: resources wrapped in {@code Resource} with a ttl; heartbeats have no body. */
class TtlSotwTest {
  @Test
  void sotwTtlExpiresWithoutHeartbeat() {
    FakeTransport transport = new FakeTransport();
    FakeScheduler clock = new FakeScheduler();
    try (XdsClient client = new XdsClient(Bootstrap.forServer("f:1", Node.getDefaultInstance()),
        XdsClient.Options.defaults().withCallbackExecutor(Runnable::run).withScheduler(clock),
        transport)) {
      RecordingWatcher w = new RecordingWatcher();
      client.watch(ResourceType.ROUTE, "r", w);
      DiscoveryResponse withTtl = DiscoveryResponse.newBuilder()
          .setTypeUrl(ResourceType.ROUTE.typeUrl()).setVersionInfo("1").setNonce("a")
          .addResources(Any.pack(wrapped("r", routes("r", "*", "/", "c"), "", 5))).build();
      transport.lastSotw().respond(withTtl);
      assertThat(w.take()).containsExactly("changed:r", "processed:1");
      assertThat(w.latest.get("r").ttl().getSeconds()).isEqualTo(5);
      clock.forward(Duration.ofSeconds(4));
      DiscoveryResponse heartbeat = DiscoveryResponse.newBuilder()
          .setTypeUrl(ResourceType.ROUTE.typeUrl()).setVersionInfo("1").setNonce("b")
          .addResources(Any.pack(wrapped("r", null, "", 5))).build();
      transport.lastSotw().respond(heartbeat);
      clock.forward(Duration.ofSeconds(4));
      assertThat(w.take()).containsExactly("processed:1");
      clock.forward(Duration.ofSeconds(1));
      assertThat(w.take()).containsExactly("dne:r");
    }
  }
}
