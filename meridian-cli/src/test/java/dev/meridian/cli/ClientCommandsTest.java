package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.meridian.internal.server.MeridianServer;
import dev.meridian.testing.ConfigFiles;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code meridian get} and {@code meridian watch} against a real Meridian server on loopback. */
class ClientCommandsTest {
  @TempDir
  Path dir;
  private MeridianServer server;
  private Path config;
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @BeforeEach
  void start() throws Exception {
    config = dir.resolve("config.yaml");
    Files.copy(Path.of("..", "examples", "quickstart.yaml"), config);
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 100)).start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private String addr() {
    return "127.0.0.1:" + server.xdsPort();
  }

  private int get(String... args) {
    PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
    PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
    return new CommandLine(new GetCommand(o, e)).execute(args);
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void getAllClustersAsJson() {
    int rc = get("--server", addr(), "--type", "clusters", "-o", "json");
    assertThat(rc).isZero();
    JsonObject doc = JsonParser.parseString(out()).getAsJsonObject();
    assertThat(doc.get("type").getAsString()).isEqualTo("type.googleapis.com/envoy.config.cluster.v3.Cluster");
    assertThat(doc.get("version").getAsString()).isNotEmpty();
    assertThat(doc.getAsJsonArray("resources")).hasSize(2);
    JsonObject first = doc.getAsJsonArray("resources").get(0).getAsJsonObject();
    assertThat(first.getAsJsonObject("resource").get("@type").getAsString()).endsWith("Cluster");
  }

  @Test
  void getNamedRouteAsYamlWithTypeUrl() {
    int rc = get("--server", addr(), "--type", "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
        "--name", "local_routes", "-o", "yaml");
    assertThat(rc).isZero();
    assertThat(out()).contains("name: local_routes").contains("weighted_clusters:")
        .contains("version:");
  }

  @Test
  void getMissingNamedResourceExitsNonZero() {
    int rc = get("--server", addr(), "--type", "endpoints", "--name", "nope", "--timeout", "1s");
    assertThat(rc).isEqualTo(GetCommand.NOT_FOUND);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("endpoints nope does not exist");
  }

  @Test
  void getMissingClusterIsSettledByTheServersAnswerNotTheTimeout() {
    long start = System.nanoTime();
    int rc = get("--server", addr(), "--type", "clusters", "--name", "greeter-v1", "--name", "nope",
        "--timeout", "60s");
    assertThat(rc).isEqualTo(GetCommand.NOT_FOUND);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
    assertThat(out()).contains("greeter-v1 "); // a table row
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("clusters nope does not exist");
  }

  /** Issue 18 §6: a refused connection is named, not `UNAVAILABLE io exception`. */
  @Test
  void getFromUnreachableServerSaysTheConnectionWasRefused() {
    String closed = closedAddress();
    int rc = get("--server", closed, "--type", "clusters", "--timeout", "5s");
    assertThat(rc).isEqualTo(GetCommand.UNREACHABLE);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .isEqualTo("meridian get: cannot get clusters: connection refused to " + closed + "\n");
  }

  @Test
  void watchReportsARefusedConnectionInWords() throws Exception {
    String closed = closedAddress();
    PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
    WatchCommand watch = new WatchCommand(o, new PrintStream(err, true, StandardCharsets.UTF_8));
    CompletableFuture<Integer> rc = CompletableFuture.supplyAsync(() -> new CommandLine(watch)
        .execute("--server", closed, "--type", "clusters", "-o", "json"));
    await(() -> lines().size() >= 1);
    watch.stop.countDown();
    assertThat(rc.get(10, java.util.concurrent.TimeUnit.SECONDS)).isZero();
    JsonObject error = JsonParser.parseString(lines().get(0)).getAsJsonObject();
    assertThat(error.get("event").getAsString()).isEqualTo("error");
    assertThat(error.get("kind").getAsString()).isEqualTo("UNAVAILABLE");
    assertThat(error.get("message").getAsString()).isEqualTo("connection refused to " + closed);
  }

  @Test
  void resolveAgainstARefusedConnectionSaysSo() {
    String closed = closedAddress();
    PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
    int rc = new CommandLine(new ResolveCommand(o, new PrintStream(err, true, StandardCharsets.UTF_8)))
        .execute("--server", closed, "--listener", "http", "--path", "/a.B/C", "--timeout", "1s");
    assertThat(rc).isEqualTo(1);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("connection refused to " + closed);
  }

  /** The address of the server, closed: nothing listens there any more. */
  private String closedAddress() {
    String a = addr();
    server.close();
    return a;
  }

  @Test
  void unknownTypeIsAUsageError() {
    assertThat(get("--server", addr(), "--type", "bogus")).isEqualTo(2);
  }

  @Test
  void watchPrintsOneJsonObjectPerUpdate() throws Exception {
    PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
    WatchCommand watch = new WatchCommand(o, new PrintStream(err, true, StandardCharsets.UTF_8));
    CompletableFuture<Integer> rc = CompletableFuture.supplyAsync(() -> new CommandLine(watch)
        .execute("--server", addr(), "--type", "clusters", "-o", "json"));
    await(() -> lines().size() >= 1);
    String changed = Files.readString(config).replace("connect_timeout: 1s", "connect_timeout: 3s");
    ConfigFiles.replaceByRename(config, changed);
    await(() -> lines().size() >= 2);
    watch.stop.countDown();
    assertThat(rc.get(10, java.util.concurrent.TimeUnit.SECONDS)).isZero();
    List<String> lines = lines();
    JsonObject first = JsonParser.parseString(lines.get(0)).getAsJsonObject();
    JsonObject second = JsonParser.parseString(lines.get(1)).getAsJsonObject();
    assertThat(first.get("event").getAsString()).isEqualTo("update");
    assertThat(first.getAsJsonArray("changed")).hasSize(2);
    assertThat(second.get("version").getAsString()).isNotEqualTo(first.get("version").getAsString());
    assertThat(second.getAsJsonArray("changed")).hasSize(2);
    assertThat(second.toString()).contains("3s");
  }

  @Test
  void resolvePrintsVirtualHostRouteClustersAndEndpoints() {
    PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
    int rc = new CommandLine(new ResolveCommand(o, new PrintStream(err, true, StandardCharsets.UTF_8)))
        .execute("--server", addr(), "--listener", "http", "--path", "/helloworld.Greeter/SayHello",
            "--header", "x-user=alice", "-o", "json");
    assertThat(rc).as(err.toString(StandardCharsets.UTF_8)).isZero();
    JsonObject doc = JsonParser.parseString(out()).getAsJsonObject();
    assertThat(doc.getAsJsonObject("virtual_host").get("name").getAsString()).isEqualTo("greeter");
    assertThat(doc.getAsJsonArray("clusters")).hasSize(2);
    assertThat(doc.getAsJsonArray("clusters").get(0).getAsJsonObject().get("weight").getAsInt())
        .isEqualTo(80);
    assertThat(doc.get("chosen_endpoint").getAsString()).startsWith("127.0.0.1:");
    assertThat(doc.getAsJsonArray("endpoints")).isNotEmpty();
  }

  @Test
  void resolveUnknownListenerExitsNonZero() {
    PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
    int rc = new CommandLine(new ResolveCommand(o, new PrintStream(err, true, StandardCharsets.UTF_8)))
        .execute("--server", addr(), "--listener", "nope", "--path", "/a.B/C", "--timeout", "1s");
    assertThat(rc).isEqualTo(1);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("listener nope does not exist");
  }

  private List<String> lines() {
    return out().lines().filter(l -> !l.isBlank()).toList();
  }

  private static void await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 20 s");
      }
      java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
    }
  }
}
