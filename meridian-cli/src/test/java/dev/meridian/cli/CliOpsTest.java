package dev.meridian.cli;

import static dev.meridian.xds.ResourceType.CLUSTER;
import static dev.meridian.xds.ResourceType.LISTENER;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.server.MeridianServer;
import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code meridian status} against a live server, and {@code meridian serve} under SIGTERM. */
class CliOpsTest {
  static final String CONFIG = """
      resources:
        - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
          name: greeter-v1
          connect_timeout: 1s
        - "@type": type.googleapis.com/envoy.config.listener.v3.Listener
          name: http
          address: { socket_address: { address: 0.0.0.0, port_value: 10000 } }
      """;

  @TempDir Path dir;

  /** A plaintext channel to 127.0.0.1:{@code port}, shut down on close. */
  private record Loopback(ManagedChannel channel) implements AutoCloseable {
    Loopback(int port) {
      this(ManagedChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build());
    }

    @Override
    public void close() {
      channel.shutdownNow();
    }
  }

  private static String[] run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.commandLine().setOut(new PrintWriter(out)).setErr(new PrintWriter(err))
        .execute(args);
    return new String[] {Integer.toString(code), out.toString(), err.toString()};
  }

  @Test
  void statusPrintsOneRowPerResourceWithAckAndNack() throws Exception {
    Path file = dir.resolve("m.yaml");
    Files.writeString(file, CONFIG);
    try (MeridianServer server = new MeridianServer(
            new MeridianServer.Options(file, "127.0.0.1", 0, 0, 50)).start();
        Loopback xds = new Loopback(server.xdsPort())) {
      RawXdsClient.Sotw ads = RawXdsClient.sotwAds(xds.channel(),
          Node.newBuilder().setId("envoy-a").setCluster("edge").build());
      DiscoveryResponse cds = ads.subscribe(CLUSTER);
      ads.ack(cds);
      DiscoveryResponse lds = ads.subscribe(LISTENER);
      ads.nack(lds, "", "bad listener");

      String server_ = "127.0.0.1:" + server.xdsPort();
      String[] r = new String[3];
      waitFor(() -> {
        String[] x = run("status", "--server", server_, "--node-id", "envoy-a");
        System.arraycopy(x, 0, r, 0, 3);
        return x[1].contains("NACKED");
      });
      assertThat(r[0]).isEqualTo("0");
      List<String> lines = r[1].lines().toList();
      assertThat(lines.get(0)).matches(
          "NODE\\s+CLUSTER\\s+TYPE\\s+NAME\\s+STATUS\\s+SERVER\\s+VERSION\\s+ERROR");
      assertThat(lines).anySatisfy(l -> assertThat(l)
          .matches("envoy-a\\s+edge\\s+CDS\\s+greeter-v1\\s+ACKED\\s+SYNCED\\s+"
              + Pattern.quote(cds.getVersionInfo())));
      assertThat(lines).anySatisfy(l -> assertThat(l)
          .matches("envoy-a\\s+edge\\s+LDS\\s+http\\s+NACKED\\s+ERROR\\s+-\\s+bad listener"));

      String[] none = run("status", "--server", server_, "--node-id", "nobody");
      assertThat(none[0]).isEqualTo("0");
      assertThat(none[1]).isEqualTo("no client with node id 'nobody'\n");
    }
  }

  /** Issue 18 §6: a refused connection is named, not `UNAVAILABLE io exception`. */
  @Test
  void statusAgainstNothingListeningSaysTheConnectionWasRefusedAndExits3() throws Exception {
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1,
        java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    String[] r = run("status", "--server", "127.0.0.1:" + port, "--timeout", "5s");
    assertThat(r[0]).isEqualTo("3");
    assertThat(r[2]).isEqualTo("meridian status: connection refused to 127.0.0.1:" + port + "\n");
  }

  @Test
  void serveExitsZeroOnSigtermAfterEndingConnectedStreams() throws Exception {
    Process p = serve("--control-plane-id", "cli-replica");
    List<String> output = new ArrayList<>();
    try (BufferedReader out = new BufferedReader(
        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      int port = -1;
      String line;
      Pattern serving = Pattern.compile("serving xDS on [^:]+:(\\d+), HTTP on ([^:]+):(\\d+)");
      while ((line = out.readLine()) != null) {
        output.add(line);
        Matcher m = serving.matcher(line);
        if (m.find()) {
          port = Integer.parseInt(m.group(1));
          assertThat(m.group(2)).isEqualTo("127.0.0.1"); // admin: loopback by default
          break;
        }
      }
      assertThat(port).as(String.join("\n", output)).isPositive();
      try (Loopback xds = new Loopback(port)) {
        RawXdsClient.Sotw ads = RawXdsClient.sotwAds(xds.channel(), "envoy-a");
        // Issue 21: the flag reaches every response.
        assertThat(ads.subscribe(CLUSTER).getControlPlane().getIdentifier())
            .isEqualTo("cli-replica");
        // SIGTERM, as an orchestrator sends it (Process.destroy() would also close our pipes).
        assertThat(new ProcessBuilder("kill", "-TERM", Long.toString(p.pid())).start()
            .waitFor()).isZero();
        assertThat(ads.closed().get(10, TimeUnit.SECONDS).getCode())
            .isEqualTo(io.grpc.Status.Code.UNAVAILABLE);
      }
      assertThat(p.waitFor(15, TimeUnit.SECONDS)).isTrue();
      while ((line = out.readLine()) != null) {
        output.add(line);
      }
    } finally {
      p.destroyForcibly();
    }
    assertThat(p.exitValue()).as(String.join("\n", output)).isZero();
    assertThat(output).anySatisfy(l -> assertThat(l).contains("shutdown streams=1 forced=false"));
  }

  /**
   * Issue 24: {@code --log-format json} writes one object per line with the text format's keys,
   * and {@code POST /logging} on the admin port changes the level while the server runs.
   */
  @Test
  void serveLogsJsonLinesAndTheLevelChangesAtRuntime() throws Exception {
    Process p = serve("--log-format", "json");
    java.util.concurrent.BlockingQueue<String> lines = new java.util.concurrent.LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader out = new BufferedReader(
          new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = out.readLine()) != null) {
          lines.add(line);
        }
      } catch (java.io.IOException e) {
        // the process ended
      }
    });
    reader.setDaemon(true);
    reader.start();
    try {
      Pattern serving = Pattern.compile("serving xDS on [^:]+:(\\d+), HTTP on ([^:]+):(\\d+)");
      Matcher m = null;
      List<com.google.gson.JsonObject> events = new ArrayList<>();
      while (m == null) {
        String line = lines.poll(15, TimeUnit.SECONDS);
        assertThat(line).as("serve's start line").isNotNull();
        Matcher found = serving.matcher(line);
        if (found.find()) {
          m = found;
        }
        if (line.startsWith("{")) {
          events.add(com.google.gson.JsonParser.parseString(line).getAsJsonObject());
        } else {
          assertThat(line).as("a log line that is not JSON").startsWith("meridian");
        }
      }
      // The structured startup event keeps its keys as JSON fields.
      assertThat(events).anySatisfy(o -> {
        assertThat(o.get("event").getAsString()).isEqualTo("config_load");
        assertThat(o.get("result").getAsString()).isEqualTo("ok");
        assertThat(o.get("level").getAsString()).isEqualTo("INFO");
        assertThat(o.get("logger").getAsString()).isEqualTo("dev.meridian.server");
      });
      int xdsPort = Integer.parseInt(m.group(1));
      String admin = "http://127.0.0.1:" + m.group(3);
      java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
      java.net.http.HttpResponse<String> set = http.send(java.net.http.HttpRequest.newBuilder(
          java.net.URI.create(admin + "/logging?level=debug"))
          .POST(java.net.http.HttpRequest.BodyPublishers.noBody()).build(),
          java.net.http.HttpResponse.BodyHandlers.ofString());
      assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
      assertThat(set.body()).contains("dev.meridian debug");
      assertThat(http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(admin
          + "/logging?level=verbose")).POST(java.net.http.HttpRequest.BodyPublishers.noBody())
          .build(), java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode())
          .isEqualTo(400);
      try (Loopback xds = new Loopback(xdsPort)) {
        RawXdsClient.Sotw ads = RawXdsClient.sotwAds(xds.channel(), "envoy-json");
        ads.ack(ads.subscribe(CLUSTER));
        // An ACK is logged at DEBUG: it shows only because the level changed at runtime.
        boolean ack = false;
        while (!ack) {
          String line = lines.poll(15, TimeUnit.SECONDS);
          assertThat(line).as("the ack event at debug").isNotNull();
          if (line.startsWith("{")) {
            com.google.gson.JsonObject o = com.google.gson.JsonParser.parseString(line)
                .getAsJsonObject();
            ack = o.has("event") && o.get("event").getAsString().equals("ack")
                && o.get("level").getAsString().equals("DEBUG");
          }
        }
      }
    } finally {
      new ProcessBuilder("kill", "-TERM", Long.toString(p.pid())).start().waitFor();
      if (!p.waitFor(15, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  /** {@code meridian serve} on the test config in a process of its own, stderr into stdout. */
  private Process serve(String... flags) throws java.io.IOException {
    Path file = dir.resolve("m.yaml");
    Files.writeString(file, CONFIG);
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), Main.class.getName(), "serve",
        "--config", file.toString(), "--xds-port", "0", "--http-port", "0",
        "--bind", "127.0.0.1", "--shutdown-timeout", "5s"));
    cmd.addAll(List.of(flags));
    return new ProcessBuilder(cmd).redirectErrorStream(true).start();
  }

  private static void waitFor(java.util.function.BooleanSupplier c) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!c.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition within 10s").isLessThan(deadline);
      java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
    }
  }
}
