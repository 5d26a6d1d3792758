package dev.meridian.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.config.GrpcProfile;
import io.grpc.xds.shaded.io.envoyproxy.envoy.admin.v3.ClientResourceStatus;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.status.v3.ClientConfig.GenericXdsConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.IntFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every case is a config that `meridian validate --profile grpc` reports as an ERROR on one field,
 * served to a real grpc-java client, which must NACK that very resource: the profile's ERROR rules
 * are grpc-java's rules, checked against grpc-java itself.
 */
@Timeout(60)
class GrpcProfileAgreesWithGrpcJavaTest {
  @TempDir Path dir;
  Greeter.Backend v1;
  Csds csds;

  @BeforeEach
  void start() throws Exception {
    v1 = new Greeter.Backend("v1");
    csds = new Csds();
  }

  @AfterEach
  void stop() throws Exception {
    csds.close();
    v1.close();
  }

  static final String ROUTES = "greeter-routes";
  static final String FAULT = "{\"name\": \"fault\", \"typed_config\": {\"@type\": "
      + "\"type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault\"}}";

  /** name, config (given the backend port), NACKed type, NACKed resource, field the profile names. */
  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of("unsupported lb_policy RANDOM", (IntFunction<Config>) port -> base(port,
            Config.cluster("greeter-v1", "RANDOM"), Config.routes(ROUTES, Config.toCluster("greeter-v1")),
            Config.clientListener("greeter", ROUTES)), Csds.CDS, "greeter-v1", "lb_policy"),
        Arguments.of("STATIC cluster type", (IntFunction<Config>) port -> base(port,
            Config.cluster("greeter-v1", "ROUND_ROBIN").replace("\"EDS\"", "\"STATIC\""),
            Config.routes(ROUTES, Config.toCluster("greeter-v1")),
            Config.clientListener("greeter", ROUTES)), Csds.CDS, "greeter-v1", "type"),
        Arguments.of("redirect route", (IntFunction<Config>) port -> base(port,
            Config.cluster("greeter-v1", "ROUND_ROBIN"),
            Config.routes(ROUTES, Config.toCluster("greeter-v1")).replace(
                "\"route\": {\"cluster\": \"greeter-v1\"}", "\"redirect\": {\"host_redirect\": \"x\"}"),
            Config.clientListener("greeter", ROUTES)), Csds.RDS, ROUTES,
            "virtual_hosts[0].routes[0].redirect"),
        Arguments.of("weights summing to 0", (IntFunction<Config>) port -> base(port,
            Config.cluster("greeter-v1", "ROUND_ROBIN"),
            Config.routes(ROUTES, Config.weighted("greeter-v1", 0)),
            Config.clientListener("greeter", ROUTES)), Csds.RDS, ROUTES,
            "virtual_hosts[0].routes[0].route.weighted_clusters"),
        Arguments.of("router not the last HTTP filter", (IntFunction<Config>) port -> base(port,
            Config.cluster("greeter-v1", "ROUND_ROBIN"),
            Config.routes(ROUTES, Config.toCluster("greeter-v1")),
            Config.clientListener("greeter", ROUTES).replace("\"http_filters\": [",
                "\"http_filters\": [" + FAULT + ", ").replace("}}]}}}", "}}, " + FAULT + "]}}}")),
            Csds.LDS, "greeter", "api_listener.api_listener.http_filters[1]"),
        Arguments.of("no HTTP filters", (IntFunction<Config>) port -> base(port,
            Config.cluster("greeter-v1", "ROUND_ROBIN"),
            Config.routes(ROUTES, Config.toCluster("greeter-v1")),
            Config.clientListener("greeter", ROUTES).replace(Config.ROUTER_FILTERS, "[]")),
            Csds.LDS, "greeter", "api_listener.api_listener.http_filters"));
  }

  static Config base(int port, String cluster, String routes, String listener) {
    return new Config().add(listener).add(routes).add(cluster)
        .add(Config.endpoints("greeter-v1", port));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void anErrorOfTheGrpcProfileIsNackedByGrpcJava(String name, IntFunction<Config> config,
      String typeUrl, String resource, String field) throws Exception {
    Config bad = config.apply(v1.port());
    Path file = dir.resolve("bad.json");
    Files.writeString(file, bad.render());
    assertThat(GrpcProfile.check(new ConfigLoader().load(file).config()))
        .filteredOn(f -> f.severity() == GrpcProfile.Severity.ERROR)
        .extracting(GrpcProfile.Finding::field).contains(field);

    try (Meridian meridian = Meridian.start(dir, bad);
        XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "e2e-node", "greeter")) {
      client.helloOrError(); // leaves the channel's idle state: resolution starts
      GenericXdsConfig nacked = Await.value(Duration.ofSeconds(20), resource + " NACKED",
          () -> csds.withStatus(client, typeUrl, resource, ClientResourceStatus.NACKED));
      Measurements.note("grpc-java NACK for " + name + ": " + nacked.getErrorState().getDetails());
      assertThat(nacked.getErrorState().getDetails()).isNotEmpty();
    }
  }
}
