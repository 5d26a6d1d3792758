package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.server.MeridianServer;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A type the config has none of is an answer, not an outage: Meridian answers a wildcard of every
 * type, empty or not, on SotW and Delta, ADS and per-type, and {@code get} says {@code No TYPE.}
 * at once; a server that stays silent is said to have sent nothing, which may mean none.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EmptyTypeTest {
  private MeridianServer server;
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    Path config = dir.resolve("config.yaml");
    Files.copy(Path.of("..", "examples", "quickstart.yaml"), config); // no secrets, runtimes...
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 1000))
        .start();
  }

  @AfterAll
  void stop() {
    server.close();
  }

  private int get(String... args) {
    out.reset();
    err.reset();
    List<String> all = new ArrayList<>(List.of("get", "--server", "127.0.0.1:" + server.xdsPort()));
    all.addAll(List.of(args));
    return LargeFleetTest.run(out, err, all.toArray(String[]::new));
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  /** {@code get TYPE flags...} answers "No TYPE." long before the 10 s timeout. */
  private void saysNoneAtOnce(String type, String... flags) {
    List<String> args = new ArrayList<>(List.of(type));
    args.addAll(List.of(flags));
    long start = System.nanoTime();
    assertThat(get(args.toArray(String[]::new))).as(type + " " + args + ": " + err()).isZero();
    assertThat(System.nanoTime() - start).as(type + " " + args + " answered at once")
        .isLessThan(TimeUnit.SECONDS.toNanos(9));
    assertThat(err()).as(type + " " + args).isEqualTo("No " + type + ".\n");
    assertThat(out.size()).isZero();
  }

  @Test
  void secretsOfAConfigWithoutSecretsAreNoneAtOnce() {
    saysNoneAtOnce("secrets");
  }

  @Test
  void everyTypeTheConfigHasNoneOfIsAnsweredOnSotw() {
    for (String type : List.of("secrets", "runtimes", "scoped-routes", "extension-configs")) {
      saysNoneAtOnce(type);
      saysNoneAtOnce(type, "--per-type");
    }
  }

  @Test
  void everyTypeTheConfigHasNoneOfIsAnsweredOnDelta() {
    for (String type : List.of("secrets", "runtimes", "scoped-routes", "extension-configs",
        "virtual-hosts", "lb-endpoints")) {
      saysNoneAtOnce(type, "--delta");
      saysNoneAtOnce(type, "--delta", "--per-type");
    }
  }

  @Test
  void anEmptyTypeAsYamlIsADocumentWithNoResources() {
    assertThat(get("secrets", "-o", "yaml")).as(err()).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("resources: []");
  }

  @Test
  void aServerThatStaysSilentIsSaidToHaveSentNothingWhichMayMeanNone() throws Exception {
    List<StreamObserver<DiscoveryResponse>> held = new ArrayList<>();
    Server silent = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
        .addService(new AggregatedDiscoveryServiceGrpc.AggregatedDiscoveryServiceImplBase() {
          @Override
          public StreamObserver<DiscoveryRequest> streamAggregatedResources(
              StreamObserver<DiscoveryResponse> responses) {
            held.add(responses); // never answered
            return new StreamObserver<>() {
              @Override public void onNext(DiscoveryRequest r) {}
              @Override public void onError(Throwable t) {}
              @Override public void onCompleted() {}
            };
          }
        }).build().start();
    try {
      String addr = "127.0.0.1:" + silent.getPort();
      out.reset();
      err.reset();
      int rc = LargeFleetTest.run(out, err, "get", "secrets", "--server", addr, "--timeout", "1s");
      assertThat(rc).isEqualTo(GetCommand.UNREACHABLE);
      assertThat(err()).isEqualTo("meridian get: " + addr + " sent nothing for secrets within "
          + "1s, which may mean it has none (some servers do not answer for a type they have "
          + "none of)\n");
    } finally {
      silent.shutdownNow();
    }
  }
}
