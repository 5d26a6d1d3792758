package dev.meridian.cli;

import static dev.meridian.xds.ResourceType.CLUSTER;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.RawXdsClient;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * Issue 25, "Nothing lost" (docs/reliability.md): {@code kill -9} of {@code meridian serve} during
 * a reload or while it publishes files ({@code --publish-dir}) never leaves a half-written published
 * file, and the next start serves the last valid config. The server runs as a process of its own
 * and is killed with SIGKILL ({@link Process#destroyForcibly} on Linux; the exit status 137 that
 * each kill is checked for says so: no shutdown hook ran).
 */
class NothingLostTest {
  /** Clusters in the default group: enough that rendering and writing them takes a while. */
  private static final int CLUSTERS = 1500;
  private static final int CANARY_CLUSTERS = 50;
  private static final int LISTENERS = 3;
  private static final int ROUNDS = 8;
  private static final Pattern SERVING =
      Pattern.compile("serving xDS on [^:]+:(\\d+), HTTP on ([^:]+):(\\d+)");

  @TempDir Path dir;

  /**
   * The config of round {@code round}: every cluster's {@code connect_timeout} and every listener's
   * {@code per_connection_buffer_limit_bytes} carry the round, so a file read back says which
   * round it is of, and a file mixing rounds or missing resources is seen. Even rounds have a
   * {@code canary} group, odd ones not: its directory is published and removed in turn.
   */
  static String config(int round, int clusters) {
    StringBuilder b = new StringBuilder("resources:\n");
    resources(b, "  ", "c", round, clusters);
    if (round % 2 == 0) {
      b.append("groups:\n  - name: canary\n    match: { node_id: \"canary-*\" }\n    resources:\n");
      resources(b, "      ", "k", round, CANARY_CLUSTERS);
    }
    return b.toString();
  }

  private static void resources(StringBuilder b, String in, String prefix, int round, int n) {
    for (int i = 0; i < n; i++) {
      String name = prefix + "-" + i;
      b.append(in).append("- \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster\n")
          .append(in).append("  name: ").append(name).append('\n')
          .append(in).append("  type: STATIC\n")
          .append(in).append("  connect_timeout: ").append(round + 1).append("s\n")
          .append(in).append("  load_assignment:\n")
          .append(in).append("    cluster_name: ").append(name).append('\n')
          .append(in).append("    endpoints:\n")
          .append(in).append("      - lb_endpoints:\n");
      for (int e = 0; e < 3; e++) {
        b.append(in).append("          - endpoint: { address: { socket_address: { address: 10.")
            .append(i / 250 % 250).append('.').append(i % 250).append('.').append(e + 1)
            .append(", port_value: 8080 } } }\n");
      }
    }
    for (int i = 0; i < LISTENERS; i++) {
      b.append(in).append("- \"@type\": type.googleapis.com/envoy.config.listener.v3.Listener\n")
          .append(in).append("  name: ").append(prefix).append("-http-").append(i).append('\n')
          .append(in).append("  per_connection_buffer_limit_bytes: ").append(1000 + round)
          .append('\n')
          .append(in).append("  address: { socket_address: { address: 127.0.0.1, port_value: ")
          .append(10000 + i).append(" } }\n");
    }
  }

  @Test
  void killedWhileReloadingAndPublishingLeavesEveryFileWholeAndTheNextStartServesTheLastConfig()
      throws Exception {
    Path config = dir.resolve("meridian.yaml");
    Path publish = dir.resolve("published");
    Files.writeString(config, config(0, CLUSTERS));
    long seed = System.nanoTime();
    Random random = new Random(seed);
    String why = "seed " + seed;

    // Round 0: a reload that is not interrupted says how long one takes (rename to new files).
    long window;
    try (Served s = Served.start(config, "--publish-dir", publish.toString())) {
      assertPublished(publish, 0, 0, true, why);
      Path clusters = publish.resolve("default").resolve("clusters.yaml");
      Object published = fileKey(clusters);
      long renamed = ConfigFiles.replaceByRename(config, config(1, CLUSTERS));
      waitFor(60, () -> !published.equals(fileKey(clusters)));
      window = System.nanoTime() - renamed;
      // The rest of the publish (listeners, the canary group's removal) follows the clusters.
      String w = why;
      waitFor(60, () -> {
        try {
          assertPublished(publish, 1, 1, true, w);
          return true;
        } catch (AssertionError | IOException | RuntimeException e) {
          return false;
        }
      });
      assertPublished(publish, 1, 1, true, why);
    }
    why += ", reload window " + TimeUnit.NANOSECONDS.toMillis(window) + " ms";

    for (int round = 2; round < ROUNDS + 2; round++) {
      String at;
      try (Served s = Served.start(config, "--publish-dir", publish.toString())) {
        // The start served and published the last config: whole, nothing left behind.
        assertPublished(publish, round - 1, round - 1, true, why);
        s.assertServesOverXds(round - 1);
        ConfigFiles.replaceByRename(config, config(round, CLUSTERS));
        if (round % 3 == 0) {
          // At the moment the publish is writing: when its temporary file appears (or, if the
          // poll misses it, once the file has changed).
          Path clusters = publish.resolve("default").resolve("clusters.yaml");
          Path tmp = clusters.resolveSibling(".clusters.yaml.tmp");
          Object published = fileKey(clusters);
          long deadline = System.nanoTime() + 4 * window + TimeUnit.SECONDS.toNanos(10);
          while (!Files.exists(tmp) && System.nanoTime() < deadline
              && published.equals(fileKey(clusters))) {
            LockSupport.parkNanos(100_000);
          }
          at = Files.exists(tmp) ? "with the temporary file present" : "after the publish";
        } else {
          // At a random moment of the reload: loading, checking, rendering, writing.
          long delay = (long) (random.nextDouble() * window * 1.2);
          LockSupport.parkNanos(delay);
          at = "after " + TimeUnit.NANOSECONDS.toMillis(delay) + " ms";
        }
        s.kill();
      }
      String killed = why + ", round " + round + " killed " + at;
      System.out.println("NothingLostTest: " + killed);
      // What the kill left: every file whole, of the old round or the new one.
      assertPublished(publish, round - 1, round, false, killed);
    }
    int last = ROUNDS + 1;
    try (Served s = Served.start(config, "--publish-dir", publish.toString())) {
      assertPublished(publish, last, last, true, why);
      s.assertServesOverXds(last);
    }

    // A config that is invalid when the server starts: the start is refused (exit 2) and the
    // files published from the last valid config are left exactly as they were.
    Map<Path, String> before = snapshot(publish);
    Files.writeString(config, "resources:\n  - { \"@type\": nonsense, name: x }\n");
    Process p = Served.command(config, "--publish-dir", publish.toString()).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(output).isEqualTo(2);
    assertThat(output).contains("meridian: invalid config");
    assertThat(snapshot(publish)).isEqualTo(before);
  }

  /** Without {@code --publish-dir} nothing on disk is the server's: the next start serves the file. */
  @Test
  void killedWhileReloadingWithoutPublishingTheNextStartServesTheConfigFile() throws Exception {
    Path config = dir.resolve("meridian.yaml");
    Files.writeString(config, config(0, 500));
    long seed = System.nanoTime();
    Random random = new Random(seed);
    for (int round = 1; round <= 3; round++) {
      try (Served s = Served.start(config)) {
        s.assertServesOverXds(round - 1);
        ConfigFiles.replaceByRename(config, config(round, 500));
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(random.nextInt(300)));
        s.kill();
      }
    }
    try (Served s = Served.start(config)) {
      s.assertServesOverXds(3);
    }
  }

  // -- what is published ---------------------------------------------------------------------

  /**
   * Every group directory's every file parses whole as a DiscoveryResponse of its type and holds
   * one round's resources, all of them: {@code from} or {@code to}. {@code settled}: after a
   * start, so nothing may be left behind and the files are exactly of round {@code to}.
   */
  private static void assertPublished(Path publish, int from, int to, boolean settled, String why)
      throws IOException {
    Set<String> dirs = new HashSet<>();
    List<Path> leftovers = new ArrayList<>();
    try (Stream<Path> s = Files.list(publish)) {
      for (Path d : s.toList()) {
        String name = d.getFileName().toString();
        if (name.startsWith(".")) {
          leftovers.add(d); // a group renamed for removal: its files are not served
          continue;
        }
        dirs.add(name);
        try (Stream<Path> files = Files.list(d)) {
          for (Path f : files.toList()) {
            if (f.getFileName().toString().startsWith(".")) {
              leftovers.add(f);
            } else {
              assertWhole(f, name.equals("canary") ? CANARY_CLUSTERS : CLUSTERS, from, to, why);
            }
          }
        }
      }
    }
    assertThat(dirs).as(why).contains("default");
    if (settled) {
      assertThat(leftovers).as("left behind; " + why).isEmpty();
      assertThat(dirs).as(why).isEqualTo(to % 2 == 0 ? Set.of("default", "canary")
          : Set.of("default"));
      for (String d : dirs) {
        for (ResourceType t : ResourceType.values()) {
          Path f = publish.resolve(d).resolve(t.shortName() + ".yaml");
          if (t == ResourceType.SECRET) {
            assertThat(f).as("Secrets only with --publish-secrets; " + why).doesNotExist();
          } else if (t.availableInSotw()) {
            assertThat(f).as(why).exists();
          }
        }
        assertThat(round(publish.resolve(d).resolve("clusters.yaml"))).as(why).isEqualTo(to);
        assertThat(round(publish.resolve(d).resolve("listeners.yaml"))).as(why).isEqualTo(to);
      }
    }
  }

  private static void assertWhole(Path f, int clusters, int from, int to, String why)
      throws IOException {
    String what = f + "; " + why;
    DiscoveryResponse r = parse(f);
    ResourceType type = ResourceType.values()[0];
    for (ResourceType t : ResourceType.values()) {
      if (f.getFileName().toString().equals(t.shortName() + ".yaml")) {
        type = t;
      }
    }
    assertThat(f.getFileName().toString()).as(what).isEqualTo(type.shortName() + ".yaml");
    assertThat(r.getTypeUrl()).as(what).isEqualTo(type.typeUrl());
    if (type == ResourceType.CLUSTER || type == ResourceType.LISTENER) {
      Set<Integer> rounds = new HashSet<>();
      for (Any a : r.getResourcesList()) {
        rounds.add(roundOf(a));
      }
      assertThat(rounds).as("one round in " + what).hasSize(1);
      assertThat(rounds.iterator().next()).as(what).isIn(from, to);
      assertThat(r.getResourcesCount()).as(what)
          .isEqualTo(type == ResourceType.CLUSTER ? clusters : LISTENERS);
    } else {
      assertThat(r.getResourcesCount()).as(what).isZero();
    }
  }

  /** The round a published cluster or listener file is of; -1 when it is not there. */
  private static int round(Path file) {
    DiscoveryResponse r;
    try {
      r = parse(file);
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return r.getResourcesCount() == 0 ? -1 : roundOf(r.getResources(0));
  }

  private static int roundOf(Any a) {
    try {
      if (a.is(Cluster.class)) {
        return (int) a.unpack(Cluster.class).getConnectTimeout().getSeconds() - 1;
      }
      return a.unpack(Listener.class).getPerConnectionBufferLimitBytes().getValue() - 1000;
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new AssertionError(e);
    }
  }

  /** A published YAML file read as Envoy reads it: YAML to JSON to the proto's JSON mapping. */
  static DiscoveryResponse parse(Path f) throws IOException {
    Object tree = new Yaml(new LoaderOptions()).load(Files.readString(f));
    DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder();
    EnvoyTypeRegistry.get().parser().merge(new com.google.gson.Gson().toJson(tree), b);
    return b.build();
  }

  /** The file's inode (a rename over it changes it); null when it is not there. */
  private static Object fileKey(Path file) {
    try {
      return Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class)
          .fileKey();
    } catch (IOException e) {
      return "absent";
    }
  }

  /** Every file under {@code dir} and its content. */
  private static Map<Path, String> snapshot(Path dir) throws IOException {
    Map<Path, String> files = new TreeMap<>();
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.toList()) {
        files.put(dir.relativize(p), Files.isDirectory(p) ? "(dir)"
            : Files.readString(p) + Files.getLastModifiedTime(p));
      }
    }
    return files;
  }

  private static void waitFor(int seconds, java.util.function.BooleanSupplier c) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!c.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition within " + seconds + " s").isLessThan(deadline);
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
    }
  }

  // -- the server process --------------------------------------------------------------------

  /** {@code meridian serve} in a process of its own, started and serving; killed on close. */
  private static final class Served implements AutoCloseable {
    final Process process;
    final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    final List<String> output = java.util.Collections.synchronizedList(new ArrayList<>());
    int xdsPort;

    private Served(Process process) {
      this.process = process;
    }

    static ProcessBuilder command(Path config, String... flags) {
      List<String> cmd = new ArrayList<>(List.of(
          Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
          "-cp", System.getProperty("java.class.path"), Main.class.getName(), "serve",
          "--config", config.toString(), "--xds-port", "0", "--http-port", "0",
          "--bind", "127.0.0.1", "--log-level", "warn"));
      cmd.addAll(List.of(flags));
      return new ProcessBuilder(cmd).redirectErrorStream(true);
    }

    static Served start(Path config, String... flags) throws Exception {
      Served s = new Served(command(config, flags).start());
      Thread reader = new Thread(() -> {
        try (BufferedReader out = new BufferedReader(
            new InputStreamReader(s.process.getInputStream(), StandardCharsets.UTF_8))) {
          String line;
          while ((line = out.readLine()) != null) {
            s.lines.add(line);
            s.output.add(line);
          }
        } catch (IOException e) {
          // the process ended
        }
      }, "serve-output");
      reader.setDaemon(true);
      reader.start();
      try {
        while (s.xdsPort == 0) {
          String line = s.lines.poll(90, TimeUnit.SECONDS);
          assertThat(line).as("serve's start line; " + s.output).isNotNull();
          Matcher m = SERVING.matcher(line);
          if (m.find()) {
            s.xdsPort = Integer.parseInt(m.group(1));
          }
        }
      } catch (Throwable t) {
        s.kill();
        throw t;
      }
      return s;
    }

    /** Every cluster it serves to a default node is of {@code round}, and all are there. */
    void assertServesOverXds(int round) throws Exception {
      ManagedChannel ch = ManagedChannelBuilder.forAddress("127.0.0.1", xdsPort).usePlaintext()
          .maxInboundMessageSize(64 << 20).build();
      try {
        RawXdsClient.Sotw ads = RawXdsClient.sotwAds(ch, "envoy-a");
        DiscoveryResponse cds = ads.subscribe(CLUSTER);
        Set<Integer> rounds = new HashSet<>();
        for (Any a : cds.getResourcesList()) {
          rounds.add(roundOf(a));
        }
        assertThat(rounds).as(String.join("\n", output)).containsExactly(round);
        assertThat(cds.getResourcesCount()).isGreaterThanOrEqualTo(500);
      } finally {
        ch.shutdownNow();
      }
    }

    /** SIGKILL: no shutdown hook, no flush; 137 = 128 + 9 says it was that signal. */
    void kill() throws InterruptedException {
      process.destroyForcibly();
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).as("killed by SIGKILL").isEqualTo(137);
    }

    @Override
    public void close() throws InterruptedException {
      if (process.isAlive()) {
        kill();
      }
    }
  }
}
