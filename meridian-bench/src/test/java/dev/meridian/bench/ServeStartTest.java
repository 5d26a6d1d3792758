package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
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
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./meridian serve} as a user starts it (issue 18, "A 20-second start"): the quickstart
 * answers xDS without a warm-up; {@code --fleet} warms up first, with the admin port up meanwhile.
 * {@code /healthz} and {@code /readyz} keep their meaning both ways (docs/operations.md: live;
 * ready for xDS).
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

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aPlainServeAnswersWithoutAWarmup() throws Exception {
    serve();

    CompletableFuture<DiscoveryResponse> first = firstResponse();
    assertThat(first.get(60, TimeUnit.SECONDS).getResourcesCount()).isEqualTo(2); // the clusters
    assertThat(status("/healthz")).isEqualTo(200);
    assertThat(status("/readyz")).isEqualTo(200);
    assertThat(Files.readString(log)).contains("config_load result=ok").doesNotContain("warmup");
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

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void serveFleetIsLiveButNotReadyWhileItWarmsUp() throws Exception {
    // A budget far longer than the checks take, even on a busy 2-core machine: the warm-up is
    // still running when the ports are asked. The server is stopped after that (see stop()).
    serve("--fleet", "--warmup", "60s");

    await("the warm-up began", () -> read(log).contains("warmup_start"));
    int healthz = status("/healthz");
    int readyz = status("/readyz");
    boolean xdsOpen = accepts(xdsPort);
    assertThat(read(log)).as("still warming up when the ports were asked")
        .doesNotContain("warmup result");
    assertThat(healthz).isEqualTo(200); // live: a liveness probe must not restart it
    assertThat(readyz).isEqualTo(503); // not ready for xDS yet
    assertThat(xdsOpen).isFalse();
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

  private static boolean accepts(int port) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      return true;
    } catch (ConnectException e) {
      return false;
    }
  }

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      return "";
    }
  }

  private void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      assertThat(server.isAlive()).as("server exited; see " + log).isTrue();
      assertThat(System.nanoTime()).as("timed out: " + what).isLessThan(deadline);
      Thread.sleep(20);
    }
  }
}
