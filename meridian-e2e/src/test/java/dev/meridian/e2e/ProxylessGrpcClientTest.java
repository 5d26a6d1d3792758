package dev.meridian.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.xds.shaded.io.envoyproxy.envoy.admin.v3.ClientResourceStatus;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.status.v3.ClientConfig.GenericXdsConfig;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real proxyless grpc-java 1.85.1 clients (io.grpc:grpc-xds) against Meridian run through the
 * {@code serve} code path with a config file on disk. grpc-java is the oracle: what it accepts,
 * routes, ACKs and NACKs is what a user would see.
 */
class ProxylessGrpcClientTest {
  static final Duration WAIT = Duration.ofSeconds(20);

  @TempDir Path dir;
  Greeter.Backend v1;
  Greeter.Backend v2;
  Csds csds;

  @BeforeEach
  void backends() throws Exception {
    v1 = new Greeter.Backend("v1");
    v2 = new Greeter.Backend("v2");
    csds = new Csds();
  }

  @AfterEach
  void stop() throws Exception {
    csds.close();
    v1.close();
    v2.close();
  }

  Config greeterTo(String routeAction) {
    return Config.service("greeter", routeAction).cluster("greeter-v1", v1.port())
        .cluster("greeter-v2", v2.port());
  }

  @Test
  void firstRpcTravelsLdsRdsCdsEdsAndEveryResourceIsAcked() throws Exception {
    try (Meridian meridian = Meridian.start(dir, greeterTo(Config.toCluster("greeter-v1")));
        XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "e2e-node", "greeter")) {
      // gRFC A27: the target's listener names the route config, whose route names the cluster,
      // whose EDS resource holds the endpoint; the RPC can only reach v1 through all four.
      assertThat(client.helloWhenReady()).isEqualTo("v1");

      for (String[] r : new String[][] {{Csds.LDS, "greeter"}, {Csds.RDS, "greeter-routes"},
          {Csds.CDS, "greeter-v1"}, {Csds.EDS, "greeter-v1"}}) {
        GenericXdsConfig seen = Await.value(WAIT, r[1] + " ACKED",
            () -> csds.withStatus(client, r[0], r[1], ClientResourceStatus.ACKED));
        assertThat(seen.getVersionInfo()).as("version of %s", r[1]).isNotEmpty();
      }
      assertThat(meridian.nacks()).isEmpty();
    }
  }
}
