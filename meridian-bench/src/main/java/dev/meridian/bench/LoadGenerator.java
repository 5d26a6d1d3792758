package dev.meridian.bench;

import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Fan-out load generator: starts the server under test in its own JVM (Meridian from
 * {@code meridian.jar} on a config file, block-style YAML by default, Meridian embedded through its publisher API by {@link
 * EmbeddedServerMain}, or java-control-plane 1.0.49 through {@link JcpServer}), connects N ADS
 * clients over loopback (one HTTP/2 connection each, plaintext or with {@code --tls true} mTLS, a
 * small shared event loop), then for each event measures the time until every client has the new
 * version. Traffic goes to 127.0.0.1 only; every wait is bounded; it stops by itself.
 *
 * <pre>
 * java -cp meridian-bench/target/meridian-bench.jar dev.meridian.bench.LoadGenerator \
 *   --server meridian|embedded|jcp --clients 1000 --clusters 10000 --variant sotw|delta --event all \
 *   [--tls true]
 * </pre>
 *
 * See {@link #usage()} and docs/benchmarks.md.
 */
public final class LoadGenerator {
  /**
   * Every bench client connects from 127.0.0.1, so the server sees them all as one peer: its
   * per-peer quotas are lifted, or more than a tenth of the fleet would be refused.
   */
  static final List<String> ONE_PEER_FLAGS = List.of("--max-connections-per-peer", "1000000",
      "--max-streams-per-peer", "1000000");

  /** One measured event. */
  public record Result(String server, String transport, String variant, int clusters, int clients,
      String event, int reached, Stats latencyMs, double bytesPerClient, double responsesPerClient,
      double cpuSeconds, long peakRssBytes, long maxRssBytes, GcLog.Pauses gc,
      long serializations, int mismatches, double generatorCpuSeconds, double wallSeconds) {
    String row() {
      return String.format(Locale.ROOT,
          "| %s | %s | %,d | %,d | %s | %s | %d/%d | %s | %s | %s | %s | %s | %s | %.1f | %.1f | %.1f | %s | %s | %s | %s |",
          server, transport, clusters, clients, variant, event, reached, clients,
          ms(latencyMs.min()), ms(latencyMs.percentile(50)), ms(latencyMs.percentile(90)),
          ms(latencyMs.percentile(99)), ms(latencyMs.max()), size(bytesPerClient),
          responsesPerClient, cpuSeconds, generatorCpuSeconds, size(maxRssBytes), size(peakRssBytes), gc,
          serializations < 0 ? "n/a" : Long.toString(serializations));
    }

    /**
     * One tab-separated line of raw figures for {@link Growth} (the markdown row rounds them):
     * server, variant, clusters, clients, bare event, reached, p99 ms, server CPU s, load
     * generator CPU s, peak RSS bytes, wall s of the CPU window.
     */
    String raw() {
      return String.join("\t", server, variant, Integer.toString(clusters),
          Integer.toString(clients), event.split(" ")[0], Integer.toString(reached),
          Double.toString(latencyMs.percentile(99)), Double.toString(cpuSeconds),
          Double.toString(generatorCpuSeconds), Long.toString(peakRssBytes),
          Double.toString(wallSeconds));
    }
  }

  /** The server column: Meridian's file-based server names its config file's format. */
  static String serverLabel(String server, String configFormat) {
    return server.equals("meridian") ? server + " (" + configFormat + ")" : server;
  }

  static final String HEADER = "| server | transport | clusters | clients | variant | event | reached | min "
      + "| p50 | p90 | p99 | max | bytes/client | responses/client | server CPU s | loadgen CPU s "
      + "| max RSS in event | peak RSS (VmHWM) | GC in event | serializations |\n"
      + "|---|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|";

  /** The transport column: plaintext, or mTLS (--tls true). */
  static String transport(boolean tls) {
    return tls ? "mTLS" : "plaintext";
  }

  static String ms(double v) {
    return Double.isNaN(v) ? "-" : v >= 1000 ? String.format(Locale.ROOT, "%.2f s", v / 1000)
        : String.format(Locale.ROOT, "%.0f ms", v);
  }

  static String size(double bytes) {
    if (bytes < 0 || Double.isNaN(bytes)) {
      return "-";
    }
    if (bytes < 1024) {
      return String.format(Locale.ROOT, "%.0f B", bytes);
    }
    if (bytes < 1024 * 1024) {
      return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024);
    }
    if (bytes < 1024L * 1024 * 1024) {
      return String.format(Locale.ROOT, "%.1f MiB", bytes / 1024 / 1024);
    }
    return String.format(Locale.ROOT, "%.2f GiB", bytes / 1024 / 1024 / 1024);
  }

  static String usage() {
    return """
        Usage: LoadGenerator [options]
          --server meridian|embedded|jcp   server under test (default meridian): 'meridian
                                     serve' on a config file, each event a new file renamed
                                     over it; Meridian embedded (EmbeddedServerMain: the public
                                     API only), each event a Publisher call in that process,
                                     timed from the command that triggers it; or JCP
          --config-format yaml|json  meridian: the config file 'serve' reads, for every event
                                     and restart (default yaml): block-style YAML as people
                                     write it, or strict JSON (one resource a line); written
                                     to a temp file, renamed over the config (mv), timed from
                                     the rename. The server column says which
          --clients N                ADS clients, one HTTP/2 connection each (default 100)
          --clusters N               EDS clusters, one endpoint set each (default 1000)
          --endpoints N              endpoints per set (default 2)
          --variant sotw|delta       ADS variant (default sotw)
          --tls true|false           mTLS between the clients and either server (default false):
                                     a CA, a server certificate (localhost, 127.0.0.1) and one
                                     client certificate (spiffe://bench.meridian/ns/fleet/sa/client)
                                     made in --work-dir/tls; the server requires a client
                                     certificate, each client channel has its own TLS context
                                     (made before the connect clock starts) and does a full
                                     handshake. All clients share the one certificate: what is
                                     measured is the handshake's cost, not distinct identities
          --event connect|all-clusters|one-endpoint|all   (default all: the three in order;
                                     a comma list runs those in order, connect first)
                  | restart          alone: the clients start first and retry; then the real
                                     launcher starts 'serve' on the fleet's config file;
                                     measured from the process start until each client holds
                                     every cluster and endpoint set (--meridian-args "--fleet"
                                     or "" for with or without fleet tuning)
          --timeout SECONDS          per event (default 300)
          --settle-ms MS             quiet time that ends an event's byte count (default 1000)
          --server-jvm "FLAGS"       JVM flags of the server (default "-Xmx8g -XX:+UseG1GC")
          --event-loop-threads N     client event loop threads (default 2)
          --client-transport epoll|nio   client sockets (default epoll where Netty has it, as the server)
          --client-window BYTES      each client's HTTP/2 stream and connection window (default
                                     268435456: Envoy's default initial_stream_window_size)
          --warmup N                 run each event N times unmeasured before the measured runs
                                     (connect: connect the fleet and close it again; default 0)
          --repeat N                 measured runs of each event (default 1); a repeated connect
                                     closes the fleet between runs
          --generator-warmup true|false  first run the same fleet and events, unrecorded,
                                     against a throwaway Meridian, so that the load generator's
                                     own JIT warm-up is not counted against the server (default true)
          --generator-warmup-runs N  how often each event runs in that pass (default 3)
          --meridian-args "FLAGS"    extra flags of 'meridian serve' (default "--fleet", as
                                     './meridian serve --fleet' runs it: for restart the
                                     launcher then adds its JVM flags, otherwise --fleet-gc and
                                     --fleet-jit add them; "" for none)
          --lift-peer-quotas true|false  give Meridian --max-connections-per-peer and
                                     --max-streams-per-peer far above the fleet: every client
                                     connects from 127.0.0.1, one peer (default true; false for
                                     a build without those flags, or to run with the defaults)
          --launcher PATH            restart: the launcher to run (default ./meridian); it gets
                                     --server-jvm in MERIDIAN_JAVA_OPTS and picks its own JVM
                                     flags (--unzeroed-direct-memory, --fleet-gc and --fleet-jit
                                     do not apply)
          --retry-ms N               restart: how often a client not yet connected retries
                                     (default 100)
          --retry-mode probe|each    restart: probe (default): one TCP probe of the port each
                                     --retry-ms stands in for the fleet's attempts until the
                                     port accepts, then every client not connected retries
                                     each --retry-ms; each: every client retries each
                                     --retry-ms from the start (1,000 clients: 10,000 failing
                                     connects a second in this one JVM, about a core of the
                                     machine the server is starting on). Before the port
                                     opens the clients' channels back off as gRPC's do
          --unzeroed-direct-memory true|false  start either server with the JVM flags that let
                                     Netty allocate direct memory without zeroing it, as
                                     'java -jar meridian.jar' does (default true)
          --fleet-gc true|false      on JDK 17-19, start either server with the G1 refinement
                                     flags that './meridian serve --fleet' starts it with
                                     (docs/operations.md, "JVM flags"; default true)
          --fleet-jit true|false     start either server with the JIT flags that './meridian
                                     serve --fleet' starts it with: its own code (dev.meridian, or
                                     JCP's io.envoyproxy.controlplane) compiled by C2 at a tenth
                                     of the usual call counts, and 3 C2 threads on up to 8 CPUs
                                     (docs/operations.md, "JVM flags"; default true)
          --meridian-jar PATH        default meridian-cli/target/meridian.jar
          --bench-jar PATH           default: the jar this class was loaded from
          --work-dir PATH            config, logs, GC logs (default target/bench-run)
          --out FILE                 append the result rows (markdown) to FILE, warm-up runs
                                     included (labelled)
          --raw FILE                 append the measured runs' raw figures to FILE, one
                                     tab-separated line each (what Growth reads)
        """;
  }

  final Map<String, String> opts = new LinkedHashMap<>();
  /** The run's mTLS material (--tls true), or null: plaintext. */
  private BenchTls tls;

  LoadGenerator(String[] args) {
    opts.put("server", "meridian");
    opts.put("clients", "100");
    opts.put("clusters", "1000");
    opts.put("endpoints", "2");
    opts.put("variant", "sotw");
    opts.put("tls", "false");
    opts.put("config-format", "yaml");
    opts.put("event", "all");
    opts.put("timeout", "300");
    opts.put("settle-ms", "1000");
    opts.put("server-jvm", "-Xmx8g -XX:+UseG1GC");
    opts.put("event-loop-threads", "2");
    opts.put("client-transport", Epoll.isAvailable() ? "epoll" : "nio");
    opts.put("client-window", Integer.toString(256 * 1024 * 1024));
    opts.put("warmup", "0");
    opts.put("repeat", "1");
    opts.put("generator-warmup", "true");
    opts.put("generator-warmup-runs", "3");
    // './meridian serve --fleet', as the figures ran it (the JVM flags come from --fleet-gc and
    // --fleet-jit; the server itself starts the same with or without it).
    opts.put("meridian-args", "--fleet");
    opts.put("launcher", "./meridian");
    opts.put("lift-peer-quotas", "true");
    opts.put("retry-ms", "100");
    opts.put("retry-mode", "probe");
    opts.put("unzeroed-direct-memory", "true");
    opts.put("fleet-gc", "true");
    opts.put("fleet-jit", "true");
    opts.put("meridian-jar", "meridian-cli/target/meridian.jar");
    opts.put("bench-jar", ownJar());
    opts.put("work-dir", "target/bench-run");
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--help") || args[i].equals("-h")) {
        System.out.print(usage());
        System.exit(0);
      }
      if (!args[i].startsWith("--") || i + 1 >= args.length || !opts.containsKey(args[i].substring(2))
          && !args[i].equals("--out") && !args[i].equals("--raw")) {
        System.err.print("bad argument " + args[i] + "\n" + usage());
        System.exit(2);
      }
      opts.put(args[i].substring(2), args[++i]);
    }
  }

  private static String ownJar() {
    try {
      return Path.of(LoadGenerator.class.getProtectionDomain().getCodeSource().getLocation().toURI())
          .toString();
    } catch (Exception e) {
      return "meridian-bench/target/meridian-bench.jar";
    }
  }

  int intOpt(String k) {
    return Integer.parseInt(opts.get(k));
  }

  /**
   * JVM flags that let (shaded) Netty allocate its direct memory without zeroing it: Java's
   * {@code ByteBuffer.allocateDirect} zeroes every new pool chunk, and a 1,000-client connect grows
   * the pools of both ends by gigabytes (docs/benchmarks.md, round 6).
   */
  static final List<String> UNZEROED_DIRECT_MEMORY = List.of(
      "--add-opens", "java.base/java.nio=ALL-UNNAMED",
      "-Dio.grpc.netty.shaded.io.netty.tryReflectionSetAccessible=true");

  /**
   * The G1 flags the {@code meridian} launcher adds on JDK 17-19 (the same words; a test keeps
   * them equal): dirtied cards wait for the next young pause instead of being refined
   * concurrently, during the push (docs/operations.md, "JVM flags").
   */
  static final List<String> FLEET_GC = List.of("-XX:-G1UseAdaptiveConcRefinement",
      "-XX:G1ConcRefinementGreenZone=600", "-XX:G1ConcRefinementYellowZone=1200",
      "-XX:G1ConcRefinementRedZone=2400");

  /**
   * The JIT flags the {@code meridian} launcher adds for {@code serve} (the same words but the
   * package; a test keeps them equal): the server's own methods reach C2 at a tenth of the usual
   * call counts.
   */
  static List<String> fleetJit(String ownPackage) {
    return List.of("-XX:CompileCommand=quiet",
        "-XX:CompileCommand=CompileThresholdScaling," + ownPackage + ".*::*,0.1");
  }

  /** And, on up to 8 CPUs, 3 C2 compiler threads (the default gives 2 CPUs 1). */
  static final List<String> FLEET_C2 = List.of("-XX:CICompilerCount=4");

  /** Whether a JVM of this feature release has the flags of {@link #FLEET_GC}. */
  static boolean hasFleetGcFlags(int feature) {
    return feature >= 17 && feature < 20;
  }

  public static void main(String[] args) throws Exception {
    if (!io.grpc.netty.shaded.io.netty.util.internal.PlatformDependent.useDirectBufferNoCleaner()) {
      log("note: the load generator's Netty zeroes the direct memory it allocates; run it with %s"
          + " so that it takes less CPU from the server under test (docs/benchmarks.md)",
          String.join(" ", UNZEROED_DIRECT_MEMORY));
    }
    List<Result> results = new LoadGenerator(args).run();
    System.exit(results.stream().allMatch(r -> r.reached() == r.clients()) ? 0 : 1);
  }

  /** The server process under test; its stdout and stderr go to its log. */
  static final class ServerProcess implements AutoCloseable {
    final Process process;
    final PrintWriter stdin;
    final Path gcLog;

    ServerProcess(List<String> command, Path log, Path gcLog) throws IOException {
      this(command, Map.of(), log, gcLog);
    }

    ServerProcess(List<String> command, Map<String, String> env, Path log, Path gcLog)
        throws IOException {
      this.gcLog = gcLog;
      ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(log.toFile());
      pb.environment().putAll(env);
      process = pb.start();
      stdin = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
    }

    long pid() {
      return process.pid();
    }

    @Override
    public void close() {
      stdin.close(); // EOF ends JCP's main
      try {
        StartTime.stop(process); // SIGTERM: Meridian's graceful shutdown
      } catch (IOException e) {
        process.destroyForcibly();
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }

  List<Result> run() throws Exception {
    String server = opts.get("server");
    boolean meridian = server.equals("meridian");
    if (!List.of("meridian", "embedded", "jcp").contains(server)) {
      throw new IllegalArgumentException("--server meridian|embedded|jcp");
    }
    boolean delta = switch (opts.get("variant")) {
      case "sotw" -> false;
      case "delta" -> true;
      default -> throw new IllegalArgumentException("--variant sotw|delta");
    };
    int clients = intOpt("clients");
    int clusters = intOpt("clusters");
    List<String> events = opts.get("event").equals("all")
        ? List.of("connect", "all-clusters", "one-endpoint") : List.of(opts.get("event").split(","));
    boolean restart = events.contains("restart");
    if (restart && (!meridian || events.size() > 1)) {
      throw new IllegalArgumentException("--event restart runs alone, with --server meridian");
    }
    for (String e : restart ? List.<String>of() : events) {
      if (!List.of("connect", "all-clusters", "one-endpoint").contains(e)) {
        throw new IllegalArgumentException("--event connect|all-clusters|one-endpoint|all");
      }
    }
    int warmup = intOpt("warmup");
    int repeat = intOpt("repeat");
    if (warmup < 0 || repeat < 1) {
      throw new IllegalArgumentException("--warmup N >= 0, --repeat N >= 1");
    }
    for (String flag : List.of("tls", "generator-warmup", "unzeroed-direct-memory", "fleet-gc",
        "fleet-jit")) {
      if (!List.of("true", "false").contains(opts.get(flag))) {
        throw new IllegalArgumentException("--" + flag + " true|false");
      }
    }
    if (!List.of("yaml", "json").contains(opts.get("config-format"))) {
      throw new IllegalArgumentException("--config-format yaml|json");
    }
    if (!List.of("probe", "each").contains(opts.get("retry-mode"))) {
      throw new IllegalArgumentException("--retry-mode probe|each");
    }
    if (opts.get("tls").equals("true")) {
      // Made before any server starts; the generator's warm-up pass uses it too.
      tls = BenchTls.create(Path.of(opts.get("work-dir")).toAbsolutePath().resolve("tls"));
      log("mTLS: CA, server and client certificates (%s) in %s", BenchTls.CLIENT_IDENTITY,
          tls.ca.getParent());
    }
    Scenario scenario = new Scenario(delta, clients, clusters, events);
    if (restart) {
      // The load generator's own warm-up: the same fleet connects to a throwaway Meridian.
      scenario = new Scenario(delta, clients, clusters, List.of("connect"));
    }
    if (opts.get("generator-warmup").equals("true")) {
      // The load generator's own JIT warm-up is not the server's cost: one unrecorded pass of the
      // same fleet and events against a throwaway Meridian compiles the client code first, so a
      // cold server is measured with a warm load generator.
      int runs = Math.max(1, intOpt("generator-warmup-runs"));
      log("generator warm-up: one pass against a throwaway Meridian server, each event %d times",
          runs);
      pass("meridian", scenario, "generator-warmup-", runs - 1, 1, new ArrayList<>());
    }
    List<Result> every = new ArrayList<>(); // warm-up runs too, labelled: for --out
    List<Result> results = new ArrayList<>();
    if (restart) {
      for (int run = 0; run < warmup + repeat; run++) {
        Result r = restart(scenario, label("restart", run, warmup, repeat));
        every.add(r);
        if (run >= warmup) {
          results.add(r);
        }
      }
    } else {
      results = pass(server, scenario, "", warmup, repeat, every);
    }
    StringBuilder sb = new StringBuilder(HEADER).append('\n');
    for (Result r : results) {
      sb.append(r.row()).append('\n');
    }
    System.out.print(sb);
    if (opts.containsKey("out")) {
      StringBuilder rows = new StringBuilder();
      every.forEach(r -> rows.append(r.row()).append('\n'));
      Files.writeString(Path.of(opts.get("out")), rows, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    }
    if (opts.containsKey("raw")) {
      StringBuilder lines = new StringBuilder();
      results.forEach(r -> lines.append(r.raw()).append('\n'));
      Files.writeString(Path.of(opts.get("raw")), lines, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    }
    return results;
  }

  /**
   * One server process: connect the fleet, run the events, stop the server. Returns the measured
   * runs; {@code every} receives the warm-up runs as well.
   */
  private List<Result> pass(String server, Scenario scenario, String tagPrefix, int warmup,
      int repeat, List<Result> every) throws Exception {
    boolean meridian = server.equals("meridian");
    boolean embedded = server.equals("embedded");
    boolean delta = scenario.delta();
    int clients = scenario.clients();
    int clusters = scenario.clusters();
    Path work = Path.of(opts.get("work-dir")).toAbsolutePath();
    Files.createDirectories(work);
    String tag = tagPrefix + server + "-" + opts.get("variant") + "-" + clusters + "x" + clients
        + (tls == null ? "" : "-mtls");
    Path gcLog = work.resolve("gc-" + tag + ".log");
    Files.deleteIfExists(gcLog);
    Fleet fleet = new Fleet(clusters, intOpt("endpoints"));
    int port = freePort();
    int httpPort = meridian || embedded ? freePort() : -1;

    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    addWords(cmd, opts.get("server-jvm"));
    if (opts.get("unzeroed-direct-memory").equals("true")) {
      // Both servers alike: what meridian.jar's manifest and main do for `java -jar`.
      cmd.addAll(UNZEROED_DIRECT_MEMORY);
    }
    if (opts.get("fleet-gc").equals("true") && hasFleetGcFlags(Runtime.version().feature())) {
      // Both servers alike, and before --server-jvm's words, which win: as ./meridian does.
      cmd.addAll(1, FLEET_GC);
    }
    if (opts.get("fleet-jit").equals("true")) {
      // Both servers alike, each for its own code, and before --server-jvm's words.
      List<String> jit = new ArrayList<>(
          fleetJit(meridian || embedded ? "dev.meridian" : "io.envoyproxy.controlplane"));
      if (Runtime.getRuntime().availableProcessors() <= 8) {
        jit.addAll(FLEET_C2);
      }
      cmd.addAll(1, jit);
    }
    cmd.add("-Xlog:gc:file=" + gcLog);
    boolean yaml = opts.get("config-format").equals("yaml");
    Path config = work.resolve("config-" + tag + (yaml ? ".yaml" : ".json"));
    if (meridian) {
      Fleet.commitMeridianConfig(prepare(fleet, config), config);
      cmd.addAll(List.of("-cp", opts.get("meridian-jar"), "dev.meridian.cli.Main",
          "serve", "--config", config.toString(), "--bind", "127.0.0.1",
          "--xds-port", Integer.toString(port), "--http-port", Integer.toString(httpPort)));
      if (Boolean.parseBoolean(opts.get("lift-peer-quotas"))) {
        cmd.addAll(ONE_PEER_FLAGS);
      }
      if (tls != null) {
        cmd.addAll(tls.serverArgs());
      }
      addWords(cmd, opts.get("meridian-args"));
    } else if (embedded) {
      // The application's own main on the bench jar (Meridian's public API inside): no
      // meridian-args, no config file; the admin port for /metrics.
      cmd.addAll(List.of("-cp", opts.get("bench-jar"), EmbeddedServerMain.class.getName(),
          Integer.toString(port), Integer.toString(clusters), opts.get("endpoints"),
          "--http-port", Integer.toString(httpPort)));
      if (tls != null) {
        cmd.addAll(tls.serverArgs());
      }
    } else {
      cmd.addAll(List.of("-cp", opts.get("bench-jar"), JcpServer.class.getName(),
          Integer.toString(port), Integer.toString(clusters), opts.get("endpoints")));
      if (tls != null) {
        cmd.addAll(tls.serverArgs());
      }
    }
    log("starting %s: %s", server, String.join(" ", cmd));
    List<Result> results = new ArrayList<>();
    boolean epoll = switch (opts.get("client-transport")) {
      case "epoll" -> true;
      case "nio" -> false;
      default -> throw new IllegalArgumentException("--client-transport epoll|nio");
    };
    EventLoopGroup group = epoll ? new EpollEventLoopGroup(intOpt("event-loop-threads"))
        : new NioEventLoopGroup(intOpt("event-loop-threads"));
    Class<? extends Channel> channelType = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
    int window = intOpt("client-window");
    List<BenchClient> fleetClients = new ArrayList<>(clients);
    try (ServerProcess proc = new ServerProcess(cmd, work.resolve("server-" + tag + ".log"), gcLog)) {
      Runtime.getRuntime().addShutdownHook(new Thread(proc.process::destroyForcibly));
      awaitPort(port, 180_000, proc.process);
      log("server pid %d listening on 127.0.0.1:%d", proc.pid(), port);
      BenchClient.Shared shared = new BenchClient.Shared(clusters);
      long timeoutMs = intOpt("timeout") * 1000L;
      long heapBefore = liveHeapMiB(proc);
      for (String event : scenario.events()) {
        for (int run = 0; run < warmup + repeat; run++) {
          boolean measured = run >= warmup;
          String label = label(event, run, warmup, repeat);
          if (event.equals("connect") && !fleetClients.isEmpty()) {
            closeFleet(fleetClients);
            awaitQuiet(proc.pid());
          }
          BenchClient.Goal goal;
          int expect = 0;
          int k = clusters / 2;
          Runnable trigger;
          if (event.equals("connect")) {
            goal = BenchClient.Goal.CONNECT;
            // The builders before the clock (with --tls true, each client's TLS context); the
            // channels are built and connect in the event.
            List<NettyChannelBuilder> builders = new ArrayList<>(clients);
            for (int i = 0; i < clients; i++) {
              builders.add(channelBuilder(tls, port, group, channelType, window));
            }
            trigger = () -> {
              for (int i = 0; i < clients; i++) {
                BenchClient c = new BenchClient(i, delta, shared, builders.get(i).build());
                c.arm(BenchClient.Goal.CONNECT, 0, 0, t0);
                fleetClients.add(c);
                c.start();
              }
            };
          } else if (event.equals("all-clusters")) {
            goal = BenchClient.Goal.ALL_CLUSTERS;
            fleet.changeAllClusters();
            expect = fleet.clusterGen();
            trigger = triggerFor(meridian, proc, fleet, config, "all-clusters");
          } else {
            goal = BenchClient.Goal.ONE_ENDPOINT;
            fleet.changeEndpoints(k);
            expect = Fleet.portFor(fleet.endpointGen(k));
            trigger = triggerFor(meridian, proc, fleet, config, "one-endpoint " + k);
          }
          if (fleetClients.isEmpty() && goal != BenchClient.Goal.CONNECT) {
            throw new IllegalStateException("the first event must be connect");
          }
          awaitQuiet(proc.pid());
          Result r = measure(serverLabel(server, opts.get("config-format")), opts.get("variant"),
              clusters, clients, label, goal, expect, k, trigger, fleetClients, proc, httpPort,
              timeoutMs);
          if (measured) {
            results.add(r);
          }
          every.add(r);
          log("%s", HEADER.lines().findFirst().orElse(""));
          log("%s", r.row());
        }
      }
      awaitQuiet(proc.pid());
      reportIdleHeap(proc, heapBefore, clients);
    } finally {
      for (BenchClient c : fleetClients) {
        c.close();
      }
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
    }
    return results;
  }

  /**
   * Restart to converged (issue 18): the fleet's clients start first and keep retrying, as a
   * fleet does through a server's restart; then the real launcher starts {@code serve} as a new
   * process, on a YAML config as users write it. Each client's figure runs from just before the
   * process start until it holds every cluster and endpoint set: the time an operator's fleet
   * spends out of sync in a rolling restart, the start included.
   */
  private Result restart(Scenario scenario, String label) throws Exception {
    boolean delta = scenario.delta();
    int clients = scenario.clients();
    int clusters = scenario.clusters();
    String serveArgs = opts.get("meridian-args").trim();
    Path work = Path.of(opts.get("work-dir")).toAbsolutePath();
    Files.createDirectories(work);
    String tag = "restart-" + opts.get("variant") + "-" + clusters + "x" + clients
        + (tls == null ? "" : "-mtls")
        + (serveArgs.isEmpty() ? "" : "-" + serveArgs.replaceAll("[^A-Za-z0-9]+", "_"));
    Path gcLog = work.resolve("gc-" + tag + ".log");
    Path log = work.resolve("server-" + tag + ".log");
    Files.deleteIfExists(gcLog);
    String format = opts.get("config-format");
    Path config = work.resolve("fleet-" + clusters + "." + format);
    Fleet restartFleet = new Fleet(clusters, intOpt("endpoints"));
    Fleet.commitMeridianConfig(prepare(restartFleet, config), config);
    int port = freePort();
    List<String> cmd = new ArrayList<>(List.of(opts.get("launcher"), "serve",
        "--config", config.toString(), "--bind", "127.0.0.1",
        "--xds-port", Integer.toString(port), "--http-port", Integer.toString(freePort())));
    if (Boolean.parseBoolean(opts.get("lift-peer-quotas"))) {
      cmd.addAll(ONE_PEER_FLAGS);
    }
    if (tls != null) {
      cmd.addAll(tls.serverArgs());
    }
    addWords(cmd, serveArgs);
    // Passed as a user's own flags: after whatever the launcher adds.
    Map<String, String> env = Map.of("MERIDIAN_JAVA_OPTS",
        (opts.get("server-jvm") + " -Xlog:gc:file=" + gcLog).trim());
    String server = "./meridian serve" + (serveArgs.isEmpty() ? "" : " " + serveArgs) + " ("
        + format + ")";
    boolean epoll = opts.get("client-transport").equals("epoll");
    EventLoopGroup group = epoll ? new EpollEventLoopGroup(intOpt("event-loop-threads"))
        : new NioEventLoopGroup(intOpt("event-loop-threads"));
    Class<? extends Channel> channelType = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
    BenchClient.Shared shared = new BenchClient.Shared(clusters);
    List<BenchClient> fleetClients = new ArrayList<>(clients);
    java.util.concurrent.ScheduledExecutorService retry =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
          Thread t = new Thread(r, "restart-retry");
          t.setDaemon(true);
          return t;
        });
    ServerProcess proc = null;
    try {
      for (int i = 0; i < clients; i++) {
        BenchClient c = new BenchClient(i, delta, shared,
            channelBuilder(tls, port, group, channelType, intOpt("client-window")).build(), true);
        fleetClients.add(c);
        c.start();
      }
      long retryMs = Math.max(1, intOpt("retry-ms"));
      String mode = opts.get("retry-mode");
      // 1,000 simulated clients retrying on their own cost this JVM about a core while the
      // server starts on the same machine; real clients retry on their own machines. So one
      // probe stands in for them until the port accepts (mode probe).
      boolean[] open = {mode.equals("each")};
      retry.scheduleWithFixedDelay(() -> {
        if (!open[0]) {
          open[0] = accepts(port);
        }
        if (open[0]) {
          fleetClients.forEach(BenchClient::retryNow);
        }
      }, retryMs, retryMs, java.util.concurrent.TimeUnit.MILLISECONDS);
      log("event %s: %d clients (retrying every %d ms, %s), %d clusters; starting %s", label,
          clients, retryMs, mode.equals("probe") ? "one probe until the port accepts"
              : "each client", clusters, String.join(" ", cmd));
      long self = ProcessHandle.current().pid();
      double selfBefore = ProcStats.cpuSeconds(self);
      long started = System.nanoTime();
      for (BenchClient c : fleetClients) {
        c.arm(BenchClient.Goal.CONNECT, 0, 0, started);
      }
      proc = new ServerProcess(cmd, env, log, gcLog);
      ServerProcess p = proc;
      Runtime.getRuntime().addShutdownHook(new Thread(p.process::destroyForcibly));
      Result r = collect(server, opts.get("variant"), clusters, clients, label, fleetClients, proc,
          intOpt("timeout") * 1000L, new Before(0, selfBefore, 0, 0, started));
      String serverLog = Files.readString(log);
      if (serverLog.contains("meridian: building")) {
        throw new IllegalStateException("the launcher built meridian.jar first; run again");
      }
      double firstResponse = fleetClients.stream().mapToDouble(BenchClient::firstResponseMillis)
          .filter(d -> !Double.isNaN(d)).min().orElse(Double.NaN);
      log("  first response %s after the process start; every client in sync after %s",
          ms(firstResponse), ms(r.latencyMs().max()));
      log("%s", HEADER.lines().findFirst().orElse(""));
      log("%s", r.row());
      return r;
    } finally {
      retry.shutdownNow();
      for (BenchClient c : fleetClients) {
        c.close();
      }
      if (proc != null) {
        StartTime.stop(proc.process);
        proc.close();
      }
      group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS)
          .await(10, java.util.concurrent.TimeUnit.SECONDS);
    }
  }

  /** Whether something accepts TCP connections on loopback {@code port}. */
  static boolean accepts(int port) {
    try (java.net.Socket s = new java.net.Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 50);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Adds the blank-separated words of a flags option (none if it is blank). */
  static void addWords(List<String> cmd, String flags) {
    for (String f : flags.trim().split("\\s+")) {
      if (!f.isEmpty()) {
        cmd.add(f);
      }
    }
  }

  /**
   * The builder of one client's channel (its own HTTP/2 connection) to the server under test on
   * 127.0.0.1: plaintext, or with {@code tls} mTLS, the server's certificate verified as {@link
   * BenchTls#AUTHORITY}. With mTLS, making the builder makes the client's TLS context (about 9 ms
   * of the load generator's CPU: what a proxy does once at its start, not at each connect); its
   * channel connects with its first call.
   */
  static NettyChannelBuilder channelBuilder(BenchTls tls, int port, EventLoopGroup group,
      Class<? extends Channel> channelType, int window) {
    // An address, not a host name: no name resolution (and its executor hop) per connection.
    NettyChannelBuilder b = tls == null
        ? NettyChannelBuilder.forAddress(new InetSocketAddress("127.0.0.1", port)).usePlaintext()
        : NettyChannelBuilder.forAddress(new InetSocketAddress("127.0.0.1", port),
            tls.clientCredentials).overrideAuthority(BenchTls.AUTHORITY);
    return b.eventLoopGroup(group).channelType(channelType).directExecutor()
        .flowControlWindow(window).maxInboundMessageSize(512 * 1024 * 1024);
  }

  /** What one scenario runs: the fleet and its events, the same for every pass. */
  private record Scenario(boolean delta, int clients, int clusters, List<String> events) {}

  /** The event column: the bare event, or which warm-up or measured run it is. */
  static String label(String event, int run, int warmup, int repeat) {
    if (warmup == 0 && repeat == 1) {
      return event;
    }
    if (run < warmup) {
      return event + " (warm-up " + (run + 1) + "/" + warmup + ")";
    }
    return event + " (run " + (run - warmup + 1) + "/" + repeat
        + (warmup > 0 ? ", after " + warmup + " warm-up" : "") + ")";
  }

  /** Start time of the running event; the connect trigger reads it. */
  private volatile long t0;

  /** Closes every client of a connected fleet (before connecting a new one). */
  private static void closeFleet(List<BenchClient> fleetClients) throws InterruptedException {
    for (BenchClient c : fleetClients) {
      c.close();
    }
    for (BenchClient c : fleetClients) {
      c.awaitClosed(10_000);
    }
    fleetClients.clear();
  }

  /**
   * Waits (at most 30 s) until the server is idle, under 5 % of a core over 250 ms, so that one
   * event does not pay for the tail of the previous one (ACKs, closed streams, a collection).
   */
  static void awaitQuiet(long pid) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 30_000;
    double last = ProcStats.cpuSeconds(pid);
    while (System.currentTimeMillis() < deadline) {
      Thread.sleep(250);
      double now = ProcStats.cpuSeconds(pid);
      if (now - last < 0.0125) {
        return;
      }
      last = now;
    }
  }

  private Runnable triggerFor(boolean meridian, ServerProcess proc, Fleet fleet, Path config,
      String command) {
    if (meridian) {
      Path tmp = prepare(fleet, config); // written before the clock starts
      return () -> Fleet.commitMeridianConfig(tmp, config);
    }
    return () -> proc.stdin.println(command);
  }

  /** Writes the fleet's config in --config-format next to {@code config}; returns the temp file. */
  private Path prepare(Fleet fleet, Path config) {
    return opts.get("config-format").equals("yaml") ? fleet.prepareMeridianYaml(config)
        : fleet.prepareMeridianConfig(config);
  }

  private Result measure(String server, String variant, int clusters, int clientCount, String event,
      BenchClient.Goal goal, int expect, int k, Runnable trigger, List<BenchClient> clients,
      ServerProcess proc, int httpPort, long timeoutMs) throws Exception {
    long pid = proc.pid();
    long serialBefore = serializations(httpPort);
    int gcBefore = GcLog.lines(proc.gcLog).size();
    double cpuBefore = ProcStats.cpuSeconds(pid);
    long self = ProcessHandle.current().pid();
    double selfBefore = ProcStats.cpuSeconds(self);
    long maxRss = ProcStats.rss(pid);
    log("event %s: %d clients, %d clusters", event, clientCount, clusters);
    t0 = System.nanoTime();
    for (BenchClient c : clients) {
      c.arm(goal, expect, k, t0);
    }
    trigger.run();
    Result r = collect(server, variant, clusters, clientCount, event, clients, proc, timeoutMs,
        new Before(cpuBefore, selfBefore, gcBefore, maxRss, t0));
    long serialAfter = serializations(httpPort);
    return new Result(r.server(), r.transport(), r.variant(), r.clusters(), r.clients(), r.event(),
        r.reached(), r.latencyMs(), r.bytesPerClient(), r.responsesPerClient(), r.cpuSeconds(),
        r.peakRssBytes(), r.maxRssBytes(), r.gc(),
        serialBefore >= 0 && serialAfter >= 0 ? serialAfter - serialBefore : -1,
        r.mismatches(), r.generatorCpuSeconds(), r.wallSeconds());
  }

  /** The server's and the load generator's figures when an event began, and when (nanoTime). */
  private record Before(double cpu, double selfCpu, int gcLines, long maxRss, long nanos) {}

  /**
   * Waits (bounded) until every client reached its goal, then until the fleet is quiet, and
   * returns the event's figures (serializations not counted).
   */
  private Result collect(String server, String variant, int clusters, int clientCount,
      String event, List<BenchClient> clients, ServerProcess proc, long timeoutMs, Before before)
      throws Exception {
    long pid = proc.pid();
    long self = ProcessHandle.current().pid();
    long maxRss = before.maxRss();
    long deadline = System.currentTimeMillis() + timeoutMs;
    long lastLog = System.currentTimeMillis();
    int reached = 0;
    while (System.currentTimeMillis() < deadline && proc.process.isAlive()) {
      reached = 0;
      int failed = 0; // a client whose stream failed never reaches the goal: stop waiting for it
      for (BenchClient c : clients) {
        reached += c.done() ? 1 : 0;
        failed += !c.done() && c.error() != null ? 1 : 0;
      }
      maxRss = Math.max(maxRss, ProcStats.rss(pid));
      if (reached + failed == clientCount) {
        break;
      }
      if (System.currentTimeMillis() - lastLog > 5000) {
        lastLog = System.currentTimeMillis();
        log("  %d/%d clients reached; server RSS %s", reached, clientCount, size(maxRss));
      }
      Thread.sleep(50);
    }
    // Settle: count the bytes that follow the goal (e.g. resends) until the fleet is quiet and no
    // client still waits for the endpoints its updated clusters re-requested (SotW warming): they
    // can follow the clusters by more than the quiet time, and must not land in the next event.
    long settleMs = intOpt("settle-ms");
    long quietSince = System.currentTimeMillis();
    long lastResponses = -1;
    long settleDeadline = System.currentTimeMillis() + Math.max(settleMs * 10, 30_000);
    while (System.currentTimeMillis() < settleDeadline) {
      long responses = 0;
      for (BenchClient c : clients) {
        responses += c.responses();
      }
      maxRss = Math.max(maxRss, ProcStats.rss(pid));
      if (responses != lastResponses) {
        lastResponses = responses;
        quietSince = System.currentTimeMillis();
      } else if (System.currentTimeMillis() - quietSince >= settleMs
          && clients.stream().noneMatch(c -> c.warming() && c.error() == null)) {
        break;
      }
      Thread.sleep(50);
    }
    long warming = clients.stream().filter(c -> c.warming() && c.error() == null).count();
    if (warming > 0) {
      log("  %d clients still wait for the endpoints they re-requested after a cluster update",
          warming);
    }
    double cpu = ProcStats.cpuSeconds(pid) - before.cpu();
    double selfCpu = ProcStats.cpuSeconds(self) - before.selfCpu();
    double wall = (System.nanoTime() - before.nanos()) / 1e9; // the window both CPUs cover
    List<String> gcLines = GcLog.lines(proc.gcLog);
    GcLog.Pauses gc = GcLog.summarize(gcLines.subList(Math.min(before.gcLines(), gcLines.size()),
        gcLines.size()));
    double[] lat = clients.stream().mapToDouble(BenchClient::latencyMillis)
        .filter(d -> !Double.isNaN(d)).toArray();
    double bytes = clients.stream().mapToLong(BenchClient::bytes).average().orElse(0);
    double responses = clients.stream().mapToLong(BenchClient::responses).average().orElse(0);
    int mismatches = clients.stream().mapToInt(BenchClient::mismatches).sum();
    long errors = clients.stream().filter(c -> c.error() != null).count();
    if (errors > 0) {
      log("  %d client streams failed, e.g. %s", errors,
          clients.stream().filter(c -> c.error() != null).findFirst().get().error());
    }
    if (mismatches > 0) {
      log("  %d resources with unexpected content (stale or unknown)", mismatches);
    }
    return new Result(server, transport(tls != null), variant, clusters, clientCount, event,
        lat.length, new Stats(lat), bytes, responses, cpu, ProcStats.peakRss(pid), maxRss, gc, -1,
        mismatches, selfCpu, wall);
  }

  /**
   * Live heap per idle client: measured once the events are over (a forced full GC lets G1
   * shrink the heap, which would make the events after it collect more often), then the server's
   * class histogram for where it goes.
   */
  private static void reportIdleHeap(ServerProcess proc, long heapBefore, int clientCount)
      throws Exception {
    long heapAfter = liveHeapMiB(proc);
    log("  live heap after a full GC: %d MiB before connect, %d MiB with %d idle clients: %.1f KiB per client",
        heapBefore, heapAfter, clientCount, (heapAfter - heapBefore) * 1024.0 / clientCount);
    Path histo = proc.gcLog.resolveSibling(proc.gcLog.getFileName().toString()
        .replace("gc-", "histo-").replace(".log", ".txt"));
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd")
        .toString(), Long.toString(proc.pid()), "GC.class_histogram").redirectErrorStream(true)
        .redirectOutput(histo.toFile()).start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
    }
    log("  class histogram of the server with idle clients: %s", histo);
  }

  /** Forces a full GC in the server (jcmd GC.run) and reads the heap after it from the GC log. */
  static long liveHeapMiB(ServerProcess proc) throws Exception {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    Process p = new ProcessBuilder(jcmd.toString(), Long.toString(proc.pid()), "GC.run")
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return -1;
    }
    Thread.sleep(200);
    return GcLog.heapAfterLastFullGcMiB(GcLog.lines(proc.gcLog));
  }

  private static final HttpClient HTTP = HttpClient.newBuilder()
      .connectTimeout(java.time.Duration.ofSeconds(5)).build();

  /**
   * Meridian's {@code meridian_resources_serialized_total} from its {@code /metrics} on
   * {@code httpPort} (docs/operations.md); -1 for no Meridian ({@code httpPort} -1) or no answer.
   */
  static long serializations(int httpPort) throws InterruptedException {
    String m = metrics(httpPort);
    return m == null ? -1 : serializations(m);
  }

  /** The text of Meridian's {@code /metrics} on {@code httpPort}; null for none or no answer. */
  static String metrics(int httpPort) throws InterruptedException {
    if (httpPort < 0) {
      return null;
    }
    try {
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + httpPort + "/metrics"))
          .timeout(java.time.Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
      return r.statusCode() != 200 ? null : r.body();
    } catch (IOException e) {
      return null;
    }
  }

  /** The serialization counter's value in a {@code /metrics} text, or -1 if it has none. */
  static long serializations(String metrics) {
    return (long) metricSum(metrics, "meridian_resources_serialized_total");
  }

  /**
   * The sum of a metric's samples over all its labels in a {@code /metrics} text ({@code name}
   * or {@code name{...}} lines), or -1 if it has none.
   */
  static double metricSum(String metrics, String name) {
    double sum = 0;
    boolean found = false;
    for (String l : metrics.lines().toList()) {
      if (l.startsWith(name + " ") || l.startsWith(name + "{")) {
        String[] f = l.trim().split("\\s+");
        sum += Double.parseDouble(f[f.length - 1]);
        found = true;
      }
    }
    return found ? sum : -1;
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  static void awaitPort(int port, long timeoutMs, Process p) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      if (!p.isAlive()) {
        throw new IllegalStateException("server exited with " + p.exitValue());
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException e) {
        Thread.sleep(100);
      }
    }
    throw new UncheckedIOException(new IOException("server did not listen on " + port));
  }

  static void log(String fmt, Object... args) {
    System.err.printf("[%tT] %s%n", System.currentTimeMillis(), String.format(Locale.ROOT, fmt, args));
  }
}
