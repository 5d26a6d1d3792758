package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code ./meridian serve} as a user starts it (issue 18, "A 20-second start"): the quickstart
 * answers xDS without a warm-up, with or without {@code --fleet} (issue 19 removed the startup
 * warm-up; {@code --fleet} is the launcher's JVM flags), and {@code /healthz} and {@code /readyz}
 * say live and ready (docs/operations.md). {@code --warmup} is a usage error that says it was
 * removed.
 */
class ServeStartTest {
  @TempDir Path dir;
  private final HttpClient http = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5)).build();
  private Process server;
  private StartTime.FirstResponse first;
  private int xdsPort;
  private int httpPort;
  private Path log;

  @AfterEach
  void stop() throws Exception {
    if (first != null) {
      first.close();
    }
    if (server != null) {
      StartTime.stop(server);
    }
  }

  private void serve(String... extra) throws Exception {
    serve(java.util.Map.of(), extra);
  }

  private void serve(java.util.Map<String, String> env, String... extra) throws Exception {
    xdsPort = LoadGenerator.freePort();
    httpPort = LoadGenerator.freePort();
    List<String> cmd = new ArrayList<>(List.of(RealLauncher.in(dir).toString(), "serve",
        "--config", RealLauncher.repo().resolve("examples/quickstart.yaml").toString(),
        "--bind", "127.0.0.1", "--xds-port", Integer.toString(xdsPort),
        "--http-port", Integer.toString(httpPort)));
    cmd.addAll(List.of(extra));
    log = dir.resolve("server.log");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(log.toFile());
    pb.environment().remove("MERIDIAN_JAVA_OPTS");
    pb.environment().remove("MERIDIAN_FLEET_FLAGS");
    pb.environment().putAll(env);
    server = pb.start();
  }

  @ParameterizedTest(name = "serve {0}")
  @ValueSource(strings = {"", "--fleet"})
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void serveAnswersWithoutAWarmup(String flags) throws Exception {
    serve(flags.isEmpty() ? new String[0] : flags.split(" "));

    CompletableFuture<DiscoveryResponse> first = firstResponse();
    assertThat(first.get(60, TimeUnit.SECONDS).getResourcesCount()).isEqualTo(2); // the clusters
    assertThat(status("/healthz")).isEqualTo(200);
    assertThat(status("/readyz")).isEqualTo(200);
    assertThat(Files.readString(log)).contains("config_load result=ok").doesNotContain("warmup");
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void theRemovedWarmupFlagIsAUsageErrorSayingSo() throws Exception {
    serve("--fleet", "--warmup", "20s");

    assertThat(server.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(server.exitValue()).isEqualTo(2);
    assertThat(Files.readString(log)).contains("meridian serve: --warmup was removed")
        .contains("docs/operations.md").doesNotContain("config_load");
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aPlainServeLoadsNeitherAllOfEnvoysApiNorFlightRecorder() throws Exception {
    // Issue 18: scanning every API type cost a start 0.25-0.3 s, and Netty's JFR events started
    // Flight Recorder at the first connection (0.2-0.3 s) before the first response.
    Path classes = dir.resolve("classes.log");
    serve(java.util.Map.of("MERIDIAN_JAVA_OPTS", "-Xlog:class+load:file=" + classes));

    assertThat(firstResponse().get(60, TimeUnit.SECONDS).getResourcesCount()).isEqualTo(2);
    String loaded = Files.readString(classes);
    assertThat(loaded).contains("envoy.extensions.filters.network.http_connection_manager.v3"
        + ".HttpConnectionManager "); // the quickstart's typed_config
    // Netty still asks whether JFR is available (a few classes); its event metadata is not built.
    assertThat(loaded).doesNotContain("io.envoyproxy.envoy.config.rbac.v3.RbacProto ")
        .doesNotContain("jdk.jfr.internal.MetadataRepository ");
  }

  /** Wildcard CDS over ADS from a client that retries until the port opens. */
  private CompletableFuture<DiscoveryResponse> firstResponse() {
    first = new StartTime.FirstResponse(xdsPort, "start-test");
    return first.response;
  }

  private int status(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

}
