package dev.meridian.bench;

import static dev.meridian.bench.LoadGenerator.log;
import static dev.meridian.bench.LoadGenerator.ms;
import static dev.meridian.bench.LoadGenerator.size;

import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Load and leaks (issue 25): starts {@code java -jar meridian.jar serve} on a YAML config on
 * loopback, drives fleets of real grpc-java SotW ADS clients ({@link BenchClient}, and {@link
 * NonReadingClient}s that stop reading) through one scenario, and prints a markdown table of the
 * server's heap after a full GC, RSS, CPU and the clients' convergence.
 *
 * <pre>
 * java -Xmx6g -cp meridian-bench/target/meridian-bench.jar dev.meridian.bench.Reliability \
 *   --scenario non-reading|cycles|storm|soak [options]
 * </pre>
 *
 * See {@link #usage()} and docs/reliability.md ("Load and leaks").
 */
public final class Reliability {
  static String usage() {
    return """
        Usage: Reliability --scenario non-reading|cycles|storm|soak [options]
          --scenario non-reading     --clients N reading clients (default 100) and --non-reading M
                                     clients (default 1000) that ACK their first CDS and EDS
                                     responses, then read nothing more (no request(n), a
                                     --non-reading-window HTTP/2 window); then --reloads R
                                     (default 100), each changing every endpoint set, each
                                     waiting until every reading client holds it. Heap after a
                                     full GC before and after the non-reading clients connect and
                                     every 10 reloads; at the end the non-reading clients read
                                     again and count what the server had queued for them
                     cycles          --clients K (default 10000, 100 clusters) connect, sync and
                                     disconnect --cycles times (default 3); heap after a full GC
                                     at idle and after each disconnect (once /metrics shows 0
                                     streams), against the idle baseline
                     storm           --clients F (default 1000) synced; then each closes its
                                     channel and reconnects, spread uniformly over 1 s, while
                                     every endpoint set changes --changes times (default 5),
                                     one every 200 ms; reconnect-to-converged per client
                     soak            --clients F (default 1000); one endpoint set changes every
                                     second (cycling) for --duration seconds (default 3600); a
                                     row every --row-seconds (default 60): heap after a forced
                                     full GC, RSS, fds, threads, convergence lag; heap trend
          --clients N                see above (default per scenario)
          --clusters N               EDS clusters (default 1000; cycles 100)
          --endpoints N              endpoints per set (default 2)
          --non-reading M            non-reading: clients that stop reading (default 1000)
          --non-reading-window BYTES non-reading: their HTTP/2 stream and connection window
                                     (default 16384)
          --reloads R                non-reading: reloads (default 100)
          --cycles N                 cycles: connect/disconnect cycles (default 3)
          --changes N                storm: config changes during the storm (default 5)
          --duration SECONDS         soak: how long (default 3600)
          --row-seconds SECONDS      soak: one row every (default 60)
          --timeout SECONDS          every bounded wait: a connect, a reload's convergence, the
                                     streams going to 0 (default 300)
          --server-jvm "FLAGS"       JVM flags of the server (default "-Xmx4g")
          --meridian-jar PATH        default meridian-cli/target/meridian.jar
          --work-dir PATH            config, server log, GC log (default target/reliability-run)
          --event-loop-threads N     client event loop threads (default 2)
          --client-window BYTES      the reading clients' HTTP/2 window (default 268435456)
          --out FILE                 append the markdown tables to FILE
        The server runs as 'java FLAGS -Xlog:gc:file=... -jar meridian.jar serve --config F
        --bind 127.0.0.1 --xds-port P --http-port H' (no --fleet). Heap after a full GC: the
        'Total' bytes of 'jcmd PID GC.class_histogram' (a full GC, then every live object
        counted). Exit status 0 if every client converged (and, for cycles, every heap within 10 % of the idle server once served).
        """;
  }

  private final Map<String, String> opts = new LinkedHashMap<>();
  private final StringBuilder md = new StringBuilder();

  Reliability(String[] args) {
    opts.put("scenario", "");
    opts.put("clients", "");
    opts.put("clusters", "");
    opts.put("endpoints", "2");
    opts.put("non-reading", "1000");
    opts.put("non-reading-window", "16384");
    opts.put("reloads", "100");
    opts.put("cycles", "3");
    opts.put("changes", "5");
    opts.put("duration", "3600");
    opts.put("row-seconds", "60");
    opts.put("timeout", "300");
    opts.put("server-jvm", "-Xmx4g");
    opts.put("meridian-jar", "meridian-cli/target/meridian.jar");
    opts.put("work-dir", "target/reliability-run");
    opts.put("event-loop-threads", "2");
    opts.put("client-window", Integer.toString(256 * 1024 * 1024));
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--help") || args[i].equals("-h")) {
        System.out.print(usage());
        System.exit(0);
      }
      if (!args[i].startsWith("--") || i + 1 >= args.length
          || !opts.containsKey(args[i].substring(2)) && !args[i].equals("--out")) {
        System.err.print("bad argument " + args[i] + "\n" + usage());
        System.exit(2);
      }
      opts.put(args[i].substring(2), args[++i]);
    }
    String s = opts.get("scenario");
    if (!List.of("non-reading", "cycles", "storm", "soak").contains(s)) {
      System.err.print("--scenario non-reading|cycles|storm|soak\n" + usage());
      System.exit(2);
    }
    if (opts.get("clients").isEmpty()) {
      opts.put("clients", switch (s) {
        case "non-reading" -> "100";
        case "cycles" -> "10000";
        default -> "1000";
      });
    }
    if (opts.get("clusters").isEmpty()) {
      opts.put("clusters", s.equals("cycles") ? "100" : "1000");
    }
  }

  int intOpt(String k) {
    return Integer.parseInt(opts.get(k).replace("_", ""));
  }

  public static void main(String[] args) throws Exception {
    Reliability r = new Reliability(args);
    boolean ok;
    try {
      ok = r.run();
    } finally {
      System.out.print(r.md);
      if (r.opts.containsKey("out")) {
        Files.writeString(Path.of(r.opts.get("out")), r.md, StandardOpenOption.CREATE,
            StandardOpenOption.APPEND);
      }
    }
    System.exit(ok ? 0 : 1);
  }

  // ---------------------------------------------------------------- the server and the clients

  /** The server under test, its config file and the fleet written into it. */
  private final class Server implements AutoCloseable {
    final Fleet fleet;
    final Path config;
    final int port;
    final int httpPort;
    final LoadGenerator.ServerProcess proc;
    /** Where each heap measurement's class histogram is kept, to see where a difference lies. */
    private final Path histograms;
    private int measured;

    Server(Fleet fleet, String tag) throws Exception {
      this.fleet = fleet;
      Path work = Path.of(opts.get("work-dir")).toAbsolutePath();
      histograms = work.resolve("histo-" + tag + "-");
      Files.createDirectories(work);
      config = work.resolve("config-" + tag + ".yaml");
      Path gcLog = work.resolve("gc-" + tag + ".log");
      Files.deleteIfExists(gcLog);
      fleet.writeMeridianYaml(config);
      port = LoadGenerator.freePort();
      httpPort = LoadGenerator.freePort();
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      LoadGenerator.addWords(cmd, opts.get("server-jvm"));
      cmd.add("-Xlog:gc:file=" + gcLog);
      cmd.addAll(List.of("-jar", opts.get("meridian-jar"), "serve", "--config", config.toString(),
          "--bind", "127.0.0.1", "--xds-port", Integer.toString(port), "--http-port",
          Integer.toString(httpPort)));
      cmd.addAll(LoadGenerator.ONE_PEER_FLAGS);
      log("starting meridian: %s", String.join(" ", cmd));
      proc = new LoadGenerator.ServerProcess(cmd, work.resolve("server-" + tag + ".log"), gcLog);
      Runtime.getRuntime().addShutdownHook(new Thread(proc.process::destroyForcibly));
      LoadGenerator.awaitPort(port, 180_000, proc.process);
      log("server pid %d listening on 127.0.0.1:%d (admin %d)", proc.pid(), port, httpPort);
    }

    long pid() {
      return proc.pid();
    }

    /** Writes the fleet's current config next to the file (call before the clock starts). */
    Path prepare() {
      return fleet.prepareMeridianYaml(config);
    }

    void commit(Path tmp) {
      Fleet.commitMeridianConfig(tmp, config);
    }

    /** Live heap (a full GC's class histogram, MiB), once the server is quiet. */
    double heapMiB() throws Exception {
      LoadGenerator.awaitQuiet(pid());
      return liveHeapMiB(pid(), Path.of(histograms + (++measured < 10 ? "0" : "") + measured
          + ".txt"));
    }

    double metric(String name) throws InterruptedException {
      String m = LoadGenerator.metrics(httpPort);
      return m == null ? -1 : LoadGenerator.metricSum(m, name);
    }

    /**
     * Streams open on the server ({@code meridian_streams_connected} over its labels; the gauge
     * has no sample at all when none is open); -1 if /metrics does not answer.
     */
    double streams() throws InterruptedException {
      String m = LoadGenerator.metrics(httpPort);
      return m == null ? -1 : Math.max(0, LoadGenerator.metricSum(m, "meridian_streams_connected"));
    }

    @Override
    public void close() {
      proc.close();
    }
  }

  private EventLoopGroup group;
  private Class<? extends Channel> channelType;

  private void clientTransport() {
    int threads = intOpt("event-loop-threads");
    if (Epoll.isAvailable()) {
      group = new EpollEventLoopGroup(threads);
      channelType = EpollSocketChannel.class;
    } else {
      group = new NioEventLoopGroup(threads);
      channelType = NioSocketChannel.class;
    }
  }

  private NettyChannelBuilder builder(Server s, int window) {
    return LoadGenerator.channelBuilder(null, s.port, group, channelType, window);
  }

  /**
   * Connects {@code n} reading SotW clients (builders made first, then all started from one
   * clock) and waits (bounded) until each holds every cluster and endpoint set.
   */
  private List<BenchClient> connect(Server s, BenchClient.Shared shared, int n) throws Exception {
    List<NettyChannelBuilder> builders = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      builders.add(builder(s, intOpt("client-window")));
    }
    List<BenchClient> clients = new ArrayList<>(n);
    long t0 = System.nanoTime();
    for (int i = 0; i < n; i++) {
      BenchClient c = new BenchClient(i, false, shared, builders.get(i).build());
      c.arm(BenchClient.Goal.CONNECT, 0, 0, t0);
      clients.add(c);
      c.start();
    }
    int reached = awaitAll(clients, s);
    log("  %d/%d clients connected and synced", reached, n);
    return clients;
  }

  /** Waits (at most --timeout) until every client reached its goal or failed; how many reached. */
  private int awaitAll(List<BenchClient> clients, Server s) throws InterruptedException {
    long deadline = System.currentTimeMillis() + intOpt("timeout") * 1000L;
    long lastLog = System.currentTimeMillis();
    while (true) {
      int reached = 0;
      int failed = 0;
      for (BenchClient c : clients) {
        reached += c.done() ? 1 : 0;
        failed += !c.done() && c.error() != null ? 1 : 0;
      }
      if (reached + failed == clients.size() || System.currentTimeMillis() > deadline
          || !s.proc.process.isAlive()) {
        if (failed > 0) {
          log("  %d client streams failed, e.g. %s", failed, clients.stream()
              .filter(c -> c.error() != null).findFirst().get().error());
        }
        return reached;
      }
      if (System.currentTimeMillis() - lastLog > 5000) {
        lastLog = System.currentTimeMillis();
        log("  %d/%d clients reached", reached, clients.size());
      }
      Thread.sleep(20);
    }
  }

  private static double[] latencies(List<BenchClient> clients) {
    return clients.stream().mapToDouble(BenchClient::latencyMillis)
        .filter(d -> !Double.isNaN(d)).toArray();
  }

  private static void close(List<BenchClient> clients) throws InterruptedException {
    clients.forEach(BenchClient::close);
    for (BenchClient c : clients) {
      c.awaitClosed(10_000);
    }
  }

  /** CPU seconds of the server and of this load generator since the scenario's start. */
  private record Cpu(double server, double self) {
    static Cpu of(long pid) {
      return new Cpu(ProcStats.cpuSeconds(pid), ProcStats.cpuSeconds(ProcessHandle.current().pid()));
    }

    String since(Cpu start) {
      return String.format(Locale.ROOT, "%.1f | %.1f", server - start.server, self - start.self);
    }
  }

  static String mib(double v) {
    return !(v >= 0) ? "-" : String.format(Locale.ROOT, "%,.1f MiB", v);
  }

  /**
   * The server's live heap in MiB: {@code jcmd PID GC.class_histogram}, which runs a full GC
   * first and counts the bytes of every live object ("Total" line); NaN if it fails. Exact to
   * the byte, where the GC log's "Pause Full" line rounds to MiB.
   */
  static double liveHeapMiB(long pid) throws Exception {
    return liveHeapMiB(pid, null);
  }

  /** {@link #liveHeapMiB(long)}, keeping the histogram in {@code keep} unless it is null. */
  static double liveHeapMiB(long pid, Path keep) throws Exception {
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd")
        .toString(), Long.toString(pid), "GC.class_histogram").redirectErrorStream(true).start();
    List<String> lines;
    try (var in = p.getInputStream()) {
      lines = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).lines()
          .toList();
    }
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return Double.NaN;
    }
    if (keep != null) {
      Files.write(keep, lines);
    }
    return histogramTotalBytes(lines) / (1024.0 * 1024);
  }

  /** The bytes of a class histogram's "Total N BYTES" line; NaN if it has none. */
  static double histogramTotalBytes(List<String> lines) {
    for (String l : lines) {
      String[] f = l.trim().split("\\s+");
      if (f.length == 3 && f[0].equals("Total")) {
        return Double.parseDouble(f[2]);
      }
    }
    return Double.NaN;
  }

  static String pct(double part, double whole) {
    return whole > 0 ? String.format(Locale.ROOT, "%+.1f %%", 100 * part / whole) : "-";
  }

  /** Open file descriptors of a process (its /proc/PID/fd entries); -1 if unreadable. */
  static long fds(long pid) {
    try (Stream<Path> s = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
      return s.count();
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /** Threads of a process (/proc/PID/status); -1 if unreadable. */
  static long threads(long pid) {
    try {
      return ProcStats.statusBytes(Files.readAllLines(Path.of("/proc", Long.toString(pid),
          "status")), "Threads");
    } catch (IOException e) {
      return -1;
    }
  }

  /** A line of a /proc file, or "?" (limits, sysctls: said in the report, never changed). */
  static String procLine(String file, String startsWith) {
    try {
      return Files.readAllLines(Path.of(file)).stream().filter(l -> l.startsWith(startsWith))
          .findFirst().orElse("?").replaceAll("\\s+", " ").trim();
    } catch (IOException e) {
      return "?";
    }
  }

  // ------------------------------------------------------------------------------ scenarios

  boolean run() throws Exception {
    clientTransport();
    try {
      return switch (opts.get("scenario")) {
        case "non-reading" -> nonReading();
        case "cycles" -> cycles();
        case "storm" -> storm();
        default -> soak();
      };
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
    }
  }

  private String fleetLine(int clients, int clusters) {
    return String.format(Locale.ROOT, "%,d clients × %,d EDS clusters (%s endpoints each), server"
        + " JVM %s, load generator on the same machine (nproc %d)", clients, clusters,
        opts.get("endpoints"), opts.get("server-jvm"), Runtime.getRuntime().availableProcessors());
  }

  /** Scenario non-reading; see {@link #usage}. */
  private boolean nonReading() throws Exception {
    int n = intOpt("clients");
    int m = intOpt("non-reading");
    int clusters = intOpt("clusters");
    int reloads = intOpt("reloads");
    int window = intOpt("non-reading-window");
    Fleet fleet = new Fleet(clusters, intOpt("endpoints"));
    BenchClient.Shared shared = new BenchClient.Shared(clusters);
    List<BenchClient> reading = List.of();
    List<NonReadingClient> stalled = new ArrayList<>(m);
    try (Server s = new Server(fleet, "non-reading-" + clusters + "x" + n + "+" + m)) {
      Cpu start = Cpu.of(s.pid());
      md.append(String.format(Locale.ROOT, "%n## Non-reading clients: %,d reading + %,d"
          + " non-reading, %,d reloads (every endpoint set each)%n%n%s; non-reading clients'"
          + " HTTP/2 window %,d B.%n%n", n, m, reloads, fleetLine(n, clusters), window));
      md.append("| when | server heap after full GC | server RSS | reading clients' convergence"
          + " p50 / p99 / max (these reloads) | reloads timed out | server CPU s | load generator"
          + " CPU s |\n|---|---:|---:|---|---:|---:|---:|\n");
      reading = connect(s, shared, n);
      double heapBefore = s.heapMiB();
      md.append(String.format(Locale.ROOT, "| %,d reading clients synced, before the non-reading"
          + " connect | %s | %s | - | - | %s |%n", n, mib(heapBefore), size(ProcStats.rss(s.pid())),
          Cpu.of(s.pid()).since(start)));
      for (int i = 0; i < m; i++) {
        NonReadingClient c = new NonReadingClient(i, shared, builder(s, window).build());
        stalled.add(c);
        c.start();
      }
      long deadline = System.currentTimeMillis() + intOpt("timeout") * 1000L;
      int synced = 0;
      for (NonReadingClient c : stalled) {
        synced += c.awaitSynced(Math.max(1, deadline - System.currentTimeMillis())) ? 1 : 0;
      }
      log("  %d/%d non-reading clients got their first EDS response and stopped reading", synced, m);
      double heapConnected = s.heapMiB();
      md.append(String.format(Locale.ROOT, "| %,d/%,d non-reading clients connected (ACKed their"
          + " first CDS and EDS, then stopped reading) | %s | %s | - | - | %s |%n", synced, m,
          mib(heapConnected), size(ProcStats.rss(s.pid())), Cpu.of(s.pid()).since(start)));
      double responsesBefore = s.metric("meridian_responses_total");
      List<Double> window10 = new ArrayList<>();
      List<Double> all = new ArrayList<>();
      int timeouts = 0;
      int timeouts10 = 0;
      double heapLast = heapConnected;
      double heapAt10 = Double.NaN;
      for (int r = 1; r <= reloads; r++) {
        fleet.changeAllEndpoints();
        int expect = Fleet.portFor(fleet.endpointGen(0));
        Path tmp = s.prepare();
        long t0 = System.nanoTime();
        for (BenchClient c : reading) {
          c.arm(BenchClient.Goal.ALL_ENDPOINTS, expect, 0, t0);
        }
        s.commit(tmp);
        int reached = awaitAll(reading, s);
        if (reached < n) {
          timeouts++;
          timeouts10++;
          log("  reload %d: %d/%d reading clients converged within --timeout", r, reached, n);
        }
        for (double d : latencies(reading)) {
          window10.add(d);
          all.add(d);
        }
        if (r == 1 || r % 10 == 0 || r == reloads) {
          Stats st = new Stats(window10.stream().mapToDouble(Double::doubleValue).toArray());
          heapLast = s.heapMiB();
          if (r == 10) {
            heapAt10 = heapLast;
          }
          md.append(String.format(Locale.ROOT, "| after %d reload%s | %s | %s | %s / %s / %s | %d |"
              + " %s |%n", r, r == 1 ? "" : "s", mib(heapLast), size(ProcStats.rss(s.pid())),
              ms(st.percentile(50)),
              ms(st.percentile(99)), ms(st.max()), timeouts10, Cpu.of(s.pid()).since(start)));
          log("  %d reloads: heap %s", r, mib(heapLast));
          window10.clear();
          timeouts10 = 0;
        }
      }
      double sent = s.metric("meridian_responses_total") - responsesBefore;
      // Verification: the non-reading clients read again; what arrives is what the server held.
      stalled.forEach(NonReadingClient::startDraining);
      Thread.sleep(3000);
      long maxPending = 0;
      long totalPending = 0;
      long maxBytes = 0;
      long overWindow = 0;
      long held = 0;
      for (NonReadingClient c : stalled) {
        long[] p = c.pending();
        held += Math.max(0, p[1] - window);
        maxPending = Math.max(maxPending, p[0]);
        totalPending += p[0];
        maxBytes = Math.max(maxBytes, p[1]);
        overWindow += p[1] > window ? 1 : 0;
      }
      long errors = stalled.stream().filter(c -> c.error() != null).count();
      Stats st = new Stats(all.stream().mapToDouble(Double::doubleValue).toArray());
      double growth = heapLast - heapConnected;
      md.append(String.format(Locale.ROOT, "%nHeap after %d reloads vs with the non-reading"
          + " clients connected: %+.1f MiB (%s); vs before they connected: %+.1f MiB (%s).%n",
          reloads,
          growth, pct(growth, heapConnected), heapLast - heapBefore,
          pct(heapLast - heapBefore, heapBefore)));
      if (reloads > 10) {
        // The first reloads also warm the server up (about as much without non-reading clients):
        // a bounded backlog shows as a flat heap from here on.
        md.append(String.format(Locale.ROOT, "Heap after %d reloads vs after 10: %+.1f MiB (%s).%n",
            reloads, heapLast - heapAt10, pct(heapLast - heapAt10, heapAt10)));
      }
      md.append(String.format(Locale.ROOT, "The non-reading clients' pending responses beyond"
          + " their windows, which the server holds until they read: %s in all.%n", size(held)));
      md.append(String.format(Locale.ROOT, "Reading clients over all %d reloads: convergence p50"
          + " %s, p99 %s, max %s; %d reloads where some reading client did not converge within"
          + " %s s.%n", reloads, ms(st.percentile(50)), ms(st.percentile(99)), ms(st.max()),
          timeouts, opts.get("timeout")));
      md.append(String.format(Locale.ROOT, "Responses the server sent during the reloads"
          + " (meridian_responses_total): %,.0f; %,d reading clients × %d reloads = %,d; the rest,"
          + " %,.0f, went to the %,d non-reading clients (%.2f each).%n", sent, n, reloads,
          (long) n * reloads, sent - (double) n * reloads, m, (sent - (double) n * reloads) / m));
      md.append(String.format(Locale.ROOT, "When the non-reading clients read again (3 s), each"
          + " received at most %d response(s) (%,d in all; largest %s; %,d clients' pending bytes"
          + " exceeded their %,d B window: the server held the rest, blocked by flow control; beyond"
          + " window + 32 KiB, grpc-java's on-ready threshold, the server's stream was not ready);"
          + " %d non-reading streams had failed.%n", maxPending, totalPending, size(maxBytes),
          overWindow, window, errors));
      return timeouts == 0 && synced == m && errors == 0;
    } finally {
      stalled.forEach(NonReadingClient::close);
      close(reading);
    }
  }

  /** Scenario cycles; see {@link #usage}. */
  private boolean cycles() throws Exception {
    int k = intOpt("clients");
    int clusters = intOpt("clusters");
    int cycles = intOpt("cycles");
    String fdLimit = procLine("/proc/self/limits", "Max open files");
    String ports = procLine("/proc/sys/net/ipv4/ip_local_port_range", "");
    String twReuse = procLine("/proc/sys/net/ipv4/tcp_tw_reuse", "");
    log("fds: this load generator's %s (needs about %d: one socket per client); ephemeral ports"
        + " %s, tcp_tw_reuse %s", fdLimit, k + 200, ports, twReuse);
    Fleet fleet = new Fleet(clusters, intOpt("endpoints"));
    BenchClient.Shared shared = new BenchClient.Shared(clusters);
    boolean ok = true;
    try (Server s = new Server(fleet, "cycles-" + clusters + "x" + k)) {
      Cpu start = Cpu.of(s.pid());
      md.append(String.format(Locale.ROOT, "%n## Connect/disconnect cycles: %,d clients × %d"
          + " cycles%n%n%s. Load generator: %s; ephemeral ports %s; tcp_tw_reuse %s.%n%n", k,
          cycles, fleetLine(k, clusters), fdLimit, ports, twReuse));
      md.append("| when | synced | connect p50 / p99 / max | streams after disconnect | server heap"
          + " after full GC | vs idle | vs idle once served | vs after cycle 1 | server RSS |"
          + " server fds | server CPU s | load generator CPU s |\n"
          + "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
      double base = s.heapMiB();
      md.append(String.format(Locale.ROOT, "| idle (config loaded, no client) | - | - | - | %s |"
          + " - | - | - | %s | %d | %s |%n", mib(base), size(ProcStats.rss(s.pid())), fds(s.pid()),
          Cpu.of(s.pid()).since(start)));
      // The same idle server once one client has come and gone: the code that serves is loaded
      // (classes, their interned strings, Netty's pool caches), which no later client adds to.
      close(connect(s, shared, 1));
      awaitNoStreams(s);
      double served = s.heapMiB();
      md.append(String.format(Locale.ROOT, "| idle once served (one client came and went) | - |"
          + " - | - | %s | %s | - | - | %s | %d | %s |%n", mib(served), pct(served - base, base),
          size(ProcStats.rss(s.pid())), fds(s.pid()), Cpu.of(s.pid()).since(start)));
      // A leak grows with every cycle; what the first connections load once (classes, their
      // interned strings, Netty's pool caches) does not: the column "vs after cycle 1" tells them
      // apart.
      double first = Double.NaN;
      for (int c = 1; c <= cycles; c++) {
        List<BenchClient> clients = connect(s, shared, k);
        int synced = (int) clients.stream().filter(BenchClient::done).count();
        Stats st = new Stats(latencies(clients));
        long fdsConnected = fds(s.pid());
        close(clients);
        double streams = awaitNoStreams(s);
        double heap = s.heapMiB();
        double diff = heap - base;
        if (c == 1) {
          first = heap;
        }
        ok &= synced == k && streams == 0 && Math.abs(heap - served) <= 0.10 * served;
        md.append(String.format(Locale.ROOT, "| cycle %d, after disconnect | %,d/%,d | %s / %s /"
            + " %s | %.0f | %s | %s | %s | %s | %s | %d (connected: %d) | %s |%n", c, synced, k,
            ms(st.percentile(50)), ms(st.percentile(99)), ms(st.max()), streams, mib(heap),
            pct(diff, base), pct(heap - served, served), c == 1 ? "-" : pct(heap - first, first),
            size(ProcStats.rss(s.pid())), fds(s.pid()), fdsConnected,
            Cpu.of(s.pid()).since(start)));
        log("  cycle %d: heap %s (idle %s)", c, mib(heap), mib(base));
      }
    }
    return ok;
  }

  /** Waits (bounded by --timeout) until the server has no stream open; returns how many it has. */
  private double awaitNoStreams(Server s) throws Exception {
    long deadline = System.currentTimeMillis() + intOpt("timeout") * 1000L;
    double streams;
    while ((streams = s.streams()) != 0 && System.currentTimeMillis() < deadline) {
      Thread.sleep(100);
    }
    return streams;
  }

  /** Scenario storm; see {@link #usage}. */
  private boolean storm() throws Exception {
    int f = intOpt("clients");
    int clusters = intOpt("clusters");
    int changes = intOpt("changes");
    Fleet fleet = new Fleet(clusters, intOpt("endpoints"));
    BenchClient.Shared shared = new BenchClient.Shared(clusters);
    List<BenchClient> old = List.of();
    BenchClient[] fresh = new BenchClient[f];
    ScheduledExecutorService reconnects = Executors.newSingleThreadScheduledExecutor();
    ScheduledExecutorService changer = Executors.newSingleThreadScheduledExecutor();
    try (Server s = new Server(fleet, "storm-" + clusters + "x" + f)) {
      old = connect(s, shared, f);
      LoadGenerator.awaitQuiet(s.pid());
      Cpu start = Cpu.of(s.pid());
      int finalPort = Fleet.portFor(fleet.endpointGen(0) + changes);
      List<NettyChannelBuilder> builders = new ArrayList<>(f);
      for (int i = 0; i < f; i++) {
        builders.add(builder(s, intOpt("client-window")));
      }
      CountDownLatch scheduled = new CountDownLatch(f + changes);
      List<BenchClient> before = old;
      long t0 = System.nanoTime();
      for (int i = 0; i < f; i++) {
        int id = i;
        reconnects.schedule(() -> {
          before.get(id).close();
          BenchClient c = new BenchClient(id, false, shared, builders.get(id).build());
          c.arm(BenchClient.Goal.ALL_ENDPOINTS, finalPort, 0, System.nanoTime());
          fresh[id] = c;
          c.start();
          scheduled.countDown();
        }, i * 1_000_000_000L / f, TimeUnit.NANOSECONDS);
      }
      for (int j = 1; j <= changes; j++) {
        changer.schedule(() -> {
          fleet.changeAllEndpoints();
          s.commit(s.prepare());
          scheduled.countDown();
        }, j * 200L, TimeUnit.MILLISECONDS);
      }
      if (!scheduled.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the storm's reconnects and changes did not all run");
      }
      log("  storm: %d reconnects and %d changes in %.2f s", f, changes,
          (System.nanoTime() - t0) / 1e9);
      List<BenchClient> clients = List.of(fresh);
      int reached = awaitAll(clients, s);
      Stats st = new Stats(latencies(clients));
      long errors = clients.stream().filter(c -> c.error() != null).count();
      md.append(String.format(Locale.ROOT, "%n## Reconnect storm: %,d clients reconnect within"
          + " 1 s while every endpoint set changes %d times, one every 200 ms%n%n%s.%n%n", f,
          changes, fleetLine(f, clusters)));
      md.append("| clients | converged to the final version | never converged (within --timeout)"
          + " | failed streams | reconnect to converged p50 / p99 / max | server RSS | server CPU s"
          + " | load generator CPU s |\n|---:|---:|---:|---:|---|---:|---:|---:|\n");
      md.append(String.format(Locale.ROOT, "| %,d | %,d | %,d | %d | %s / %s / %s | %s | %s |%n",
          f, reached, f - reached, errors, ms(st.percentile(50)), ms(st.percentile(99)),
          ms(st.max()), size(ProcStats.rss(s.pid())), Cpu.of(s.pid()).since(start)));
      md.append(String.format(Locale.ROOT, "%nNo stream starved: the slowest client converged %s"
          + " after its reconnect (max above); never converged: %d.%n", ms(st.max()), f - reached));
      return reached == f;
    } finally {
      reconnects.shutdownNow();
      changer.shutdownNow();
      old.forEach(BenchClient::close);
      for (BenchClient c : fresh) {
        if (c != null) {
          c.close();
        }
      }
    }
  }

  /** One soak row. */
  record SoakRow(double elapsedS, double heapMiB, long rss, long fds, long threads, int changes,
      double lagP99Ms, int late, int notConverged, String cpu) {}

  /** Scenario soak; see {@link #usage}. */
  private boolean soak() throws Exception {
    int f = intOpt("clients");
    int clusters = intOpt("clusters");
    long durationMs = intOpt("duration") * 1000L;
    long rowMs = intOpt("row-seconds") * 1000L;
    Fleet fleet = new Fleet(clusters, intOpt("endpoints"));
    BenchClient.Shared shared = new BenchClient.Shared(clusters);
    List<BenchClient> clients = List.of();
    List<SoakRow> rows = new ArrayList<>();
    try (Server s = new Server(fleet, "soak-" + clusters + "x" + f)) {
      clients = connect(s, shared, f);
      Cpu start = Cpu.of(s.pid());
      md.append(String.format(Locale.ROOT, "%n## Soak: one endpoint set changes every second for"
          + " %s s%n%n%s. Heap: live bytes after a full GC forced at each row (jcmd GC.class_histogram; the schedule"
          + " waits for it). Lag p99: of every client for every change in the row's interval, a"
          + " client that did not hold a change within its second counting as late.%n%n",
          opts.get("duration"), fleetLine(f, clusters)));
      md.append("| elapsed | server heap after full GC | server RSS | server fds | server threads"
          + " | changes applied | convergence lag p99 | late (client × change, > 1 s) | clients not"
          + " converged | server CPU s | load generator CPU s |\n"
          + "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
      long t0 = System.currentTimeMillis();
      rows.add(soakRow(s, 0, 0, new ArrayList<>(), 0, 0, start));
      int changes = 0;
      int late = 0;
      List<Double> lags = new ArrayList<>();
      long next = System.currentTimeMillis();
      long nextRow = t0 + rowMs;
      while (System.currentTimeMillis() - t0 < durationMs && s.proc.process.isAlive()) {
        int k = changes % clusters;
        fleet.changeEndpoints(k);
        int port = Fleet.portFor(fleet.endpointGen(k));
        Path tmp = s.prepare();
        long armed = System.nanoTime();
        for (BenchClient c : clients) {
          c.arm(BenchClient.Goal.ONE_ENDPOINT, port, k, armed);
        }
        s.commit(tmp);
        changes++;
        next += 1000;
        Thread.sleep(Math.max(0, next - System.currentTimeMillis()));
        for (BenchClient c : clients) {
          double d = c.latencyMillis();
          if (Double.isNaN(d)) {
            late++;
          } else {
            lags.add(d);
          }
        }
        if (System.currentTimeMillis() >= nextRow) {
          int notConverged = f - awaitAll(clients, s); // the last change, bounded by --timeout
          rows.add(soakRow(s, (System.currentTimeMillis() - t0) / 1000.0, changes, lags, late,
              notConverged, start));
          lags.clear();
          late = 0;
          nextRow += rowMs;
          next = System.currentTimeMillis(); // the forced GC is not made up for by a burst
        }
      }
      double[] hours = rows.stream().mapToDouble(r -> r.elapsedS() / 3600).toArray();
      double[] heaps = rows.stream().mapToDouble(SoakRow::heapMiB)
          .toArray();
      Growth.Fit fit = Growth.fit(hours, heaps);
      int notConverged = rows.stream().mapToInt(SoakRow::notConverged).max().orElse(0);
      md.append(String.format(Locale.ROOT, "%nVerdict: heap trend %s MiB per hour (least squares"
          + " over the %d rows, heap after full GC against elapsed time); %s.%n",
          Growth.num(fit.slope()), rows.size(), notConverged == 0
              ? "every client converged at every row"
              : "**clients not converged** (up to " + notConverged + " at a row)"));
      return notConverged == 0;
    } finally {
      close(clients);
    }
  }

  private SoakRow soakRow(Server s, double elapsedS, int changes, List<Double> lags, int late,
      int notConverged, Cpu start) throws Exception {
    double[] all = new double[lags.size() + late];
    for (int i = 0; i < lags.size(); i++) {
      all[i] = lags.get(i);
    }
    for (int i = lags.size(); i < all.length; i++) {
      all[i] = Double.POSITIVE_INFINITY;
    }
    double p99 = new Stats(all).percentile(99);
    double heap = liveHeapMiB(s.pid()); // not awaitQuiet: the soak never is
    SoakRow r = new SoakRow(elapsedS, heap, ProcStats.rss(s.pid()), fds(s.pid()),
        threads(s.pid()), changes, p99, late, notConverged, Cpu.of(s.pid()).since(start));
    md.append(String.format(Locale.ROOT, "| %.0f s | %s | %s | %d | %d | %,d | %s | %d | %d | %s"
        + " |%n", r.elapsedS(), mib(r.heapMiB()), size(r.rss()), r.fds(), r.threads(), r.changes(),
        all.length == 0 ? "-" : Double.isInfinite(p99) ? "> 1 s" : ms(p99), r.late(),
        r.notConverged(), r.cpu()));
    log("  soak %.0f s: heap %s, %d changes, lag p99 %s, %d late, %d not converged", elapsedS,
        mib(heap), changes, Double.isInfinite(p99) ? "> 1 s" : ms(p99), late, notConverged);
    return r;
  }
}
