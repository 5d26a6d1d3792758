package dev.meridian.internal.pgv;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Duration;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import java.time.Clock;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** One engine serves every thread: types compiled by whichever thread comes first. */
class PgvSharedEngineTest {
  private static Cluster cluster(int i) {
    // every third cluster has a port past 65535 and every fifth a negative timeout
    return Cluster.newBuilder().setName("c" + i)
        .setConnectTimeout(Duration.newBuilder().setSeconds(i % 5 == 0 ? -1 : 1))
        .setLoadAssignment(ClusterLoadAssignment.newBuilder().setClusterName("c" + i)
            .addEndpoints(LocalityLbEndpoints.newBuilder().addLbEndpoints(LbEndpoint.newBuilder()
                .setEndpoint(Endpoint.newBuilder().setAddress(Address.newBuilder()
                    .setSocketAddress(SocketAddress.newBuilder().setAddress("10.0.0.1")
                        .setPortValue(i % 3 == 0 ? 70000 : 80)))))))
        .build();
  }

  @Test
  void checksFromManyThreadsAtOnceFindWhatOneThreadFinds() {
    List<Cluster> clusters = IntStream.range(0, 2000).mapToObj(PgvSharedEngineTest::cluster)
        .toList();
    PgvRules alone = new PgvRules(url -> null, Clock.systemUTC());
    List<List<Violation>> expected = clusters.stream().map(alone::check).toList();

    PgvRules shared = new PgvRules(url -> null, Clock.systemUTC());
    List<List<Violation>> got = clusters.parallelStream().map(shared::check).toList();

    assertThat(got).isEqualTo(expected);
    assertThat(expected.stream().mapToInt(List::size).sum()).isEqualTo(667 + 400);
  }
}
