package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.protocol.HeartbeatPolicy;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.Test;

/**
 * The count of held REST-JSON long polls ({@code --max-rest-long-polls}, docs/reliability.md
 * "Bounds") stays balanced when a poll cannot be held: its timeout refused by a timer that is
 * shutting down.
 */
class RestLongPollCountTest {
  @Test
  void aPollWhoseTimeoutCannotBeScheduledIsAnswered503AndNotCountedAsHeld() throws Exception {
    ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    timers.shutdown(); // as during a server's shutdown: schedule() throws RejectedExecution
    RestDiscovery rest = new RestDiscovery(RestDiscoveryFuzzTest.HUB, Clock.systemUTC(),
        HeartbeatPolicy.DEFAULT, Runnable::run, timers, Duration.ofSeconds(30), false,
        Bounds.DEFAULT, new HttpExecutor("rest-count", Bounds.DEFAULT, null),
        new RequestMemory(Bounds.DEFAULT.requestMemoryLimit()));
    RestDiscoveryFuzzTest.Exchange first = new RestDiscoveryFuzzTest.Exchange(
        RestDiscovery.PREFIX + "clusters", "{\"node\": {\"id\": \"n\"}}".getBytes(
            StandardCharsets.UTF_8));
    rest.handle(first);
    assertThat(first.status).isEqualTo(200);
    io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse.Builder r =
        io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse.newBuilder();
    dev.meridian.internal.protocol.EnvoyTypeRegistry.get().parser()
        .merge(first.body.toString(StandardCharsets.UTF_8), r);
    String version = r.getVersionInfo();
    assertThat(version).isNotEmpty();

    RestDiscoveryFuzzTest.Exchange poll = new RestDiscoveryFuzzTest.Exchange(
        RestDiscovery.PREFIX + "clusters", ("{\"node\": {\"id\": \"n\"}, \"version_info\": \""
            + version + "\"}").getBytes(StandardCharsets.UTF_8));
    poll.getRequestHeaders().add("Prefer", "wait=10");
    rest.handle(poll);

    assertThat(poll.status).isEqualTo(503);
    assertThat(poll.getResponseHeaders().getFirst("Retry-After")).isEqualTo("1");
    assertThat(poll.closed).isTrue();
    assertThat(rest.held()).isZero();
  }
}
