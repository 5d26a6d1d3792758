package dev.meridian.bench;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.meridian.testing.EtcdProcess;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
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
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Replicas on etcd (issue 21): one real etcd, N {@code meridian serve --config etcd://...}
 * processes, and a fleet of {@link ReplicaClient}s spread over them, all on this machine over
 * loopback. The config is YAML as users write it, written to etcd with {@code meridian apply} run
 * as a user runs it ({@code java -jar meridian.jar apply ...}). First the load generator
 * rehearses the connect and the failover against throwaway replicas ({@code
 * --generator-warmup-runs}: its own JIT, as {@link LoadGenerator}'s warm-up passes); the measured
 * replicas start cold after. Events, in order:
 *
 * <ol>
 *   <li><b>connect</b>: every client holds every cluster and endpoint set;
 *   <li><b>one-endpoint</b>: {@code apply} of one changed endpoint set, from the apply's start (and
 *       from its commit: the summary line it prints after the transaction) until each client holds
 *       the new endpoints;
 *   <li><b>failover</b>: {@code kill -9} of replica 0; its clients move to the others and resume
 *       with what they hold. Per client: from the kill until its new stream is established on a
 *       survivor with the resume requests sent; for the fleet: until the survivors have received
 *       every resume request ({@code meridian_requests_total}); resources resent: what the moved
 *       clients received after the kill (and the survivors' {@code meridian_responses_total}),
 *       which must be 0; then the survivors' {@code /clients} must show every moved client
 *       {@code in_sync};
 *   <li><b>big-apply</b>: the clients disconnect, then {@code apply --prune} of a new config of
 *       {@code --big-clusters} clusters with their endpoints; per surviving replica, from the
 *       apply's start (and from its commit) until its {@code /metrics} serve that many clusters.
 * </ol>
 *
 * <pre>
 * java -cp meridian-bench/target/meridian-bench.jar dev.meridian.bench.ReplicaBench \
 *   --replicas 3 --clients 1000 --clusters 100 --big-clusters 10000 --variant sotw
 * </pre>
 */
public final class ReplicaBench {
  /** One event's figures. */
  record Row(String event, int clients, int reached, Stats latencyMs, String fromCommit,
      long resent, String note, double replicasCpu, double etcdCpu, double applyCpu,
      double generatorCpu) {
    String render() {
      return String.format(Locale.ROOT,
          "| %s | %,d | %d/%d | %s | %s | %s | %s | %s | %.1f | %.1f | %s | %.1f | %s |",
          event, clients, reached, clients, LoadGenerator.ms(latencyMs.percentile(50)),
          LoadGenerator.ms(latencyMs.percentile(99)), LoadGenerator.ms(latencyMs.max()),
          fromCommit, resent < 0 ? "-" : Long.toString(resent), replicasCpu, etcdCpu,
          Double.isNaN(applyCpu) ? "-" : String.format(Locale.ROOT, "%.1f", applyCpu), generatorCpu,
          note);
    }
  }

  static final String HEADER = "| event | clients | reached | p50 | p99 | max | p99 / max from "
      + "commit | resources resent | replicas CPU s | etcd CPU s | apply CPU s | loadgen CPU s | "
      + "note |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|";

  static String usage() {
    return """
        Usage: ReplicaBench [options]
          --replicas N            meridian serve processes on one etcd (default 3)
          --clients N             clients per replica, one HTTP/2 connection each (default 1000)
          --clusters N            EDS clusters of the fleet's config, --endpoints each (default 100)
          --endpoints N           endpoints per set (default 2)
          --big-clusters N        clusters of the last event's apply (default 10000)
          --variant sotw|delta    ADS variant (default sotw)
          --server-jvm "FLAGS"    JVM flags of each replica (default "-Xmx2g -XX:+UseG1GC")
          --event-loop-threads N  client event loop threads (default 2)
          --timeout SECONDS       per event (default 120)
          --generator-warmup-runs N  rehearsals of the connect and the failover, unrecorded,
                                  each against two throwaway replicas, so that the measured
                                  events do not pay this load generator's own JIT (default 2)
          --meridian-jar PATH     default meridian-cli/target/meridian.jar
          --work-dir PATH         configs, logs (default target/replica-bench)
          --out FILE              append the result rows (markdown) to FILE
        """;
  }

  final Map<String, String> opts = new LinkedHashMap<>();

  ReplicaBench(String[] args) {
    opts.put("replicas", "3");
    opts.put("clients", "1000");
    opts.put("clusters", "100");
    opts.put("endpoints", "2");
    opts.put("big-clusters", "10000");
    opts.put("variant", "sotw");
    opts.put("server-jvm", "-Xmx2g -XX:+UseG1GC");
    opts.put("event-loop-threads", "2");
    opts.put("timeout", "120");
    opts.put("generator-warmup-runs", "2");
    opts.put("meridian-jar", "meridian-cli/target/meridian.jar");
    opts.put("work-dir", "target/replica-bench");
    for (int i = 0; i < args.length; i++) {
      String k = args[i].startsWith("--") ? args[i].substring(2) : "";
      if (args[i].equals("--help") || args[i].equals("-h")) {
        System.out.print(usage());
        System.exit(0);
      }
      if (i + 1 >= args.length || !opts.containsKey(k) && !k.equals("out")) {
        throw new IllegalArgumentException("bad argument " + args[i] + "\n" + usage());
      }
      opts.put(k, args[++i]);
    }
    if (!List.of("sotw", "delta").contains(opts.get("variant"))) {
      throw new IllegalArgumentException("--variant sotw|delta");
    }
    if (intOpt("generator-warmup-runs") < 0) {
      throw new IllegalArgumentException("--generator-warmup-runs must be 0 or more");
    }
  }

  int intOpt(String k) {
    return Integer.parseInt(opts.get(k));
  }

  public static void main(String[] args) throws Exception {
    List<Row> rows = new ReplicaBench(args).run();
    System.exit(rows.stream().allMatch(r -> r.reached() == r.clients() && r.resent() <= 0) ? 0 : 1);
  }

  /** A {@code meridian serve} replica process. */
  record Replica(int index, Process process, int xdsPort, int httpPort, Path log) {
    long pid() {
      return process.pid();
    }
  }

  /** One {@code meridian apply} run: its start, the commit (summary line), exit, and revision. */
  record Apply(long startNanos, long commitNanos, long exitNanos, long revision, double cpu,
      String output) {}

  private Path work;
  private final List<Replica> replicas = new ArrayList<>();
  private long etcdPid = -1;

  List<Row> run() throws Exception {
    int n = intOpt("replicas");
    int perReplica = intOpt("clients");
    int clusters = intOpt("clusters");
    boolean delta = opts.get("variant").equals("delta");
    long timeoutMs = intOpt("timeout") * 1000L;
    work = Path.of(opts.get("work-dir")).toAbsolutePath();
    Files.createDirectories(work);
    String loadBefore = loadavg();
    log("machine load before: %s", loadBefore);
    List<Row> rows = new ArrayList<>();
    boolean epoll = Epoll.isAvailable();
    EventLoopGroup group = epoll ? new EpollEventLoopGroup(intOpt("event-loop-threads"))
        : new NioEventLoopGroup(intOpt("event-loop-threads"));
    Class<? extends Channel> channelType = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "replica-client-moves");
      t.setDaemon(true);
      return t;
    });
    List<ReplicaClient> clients = new ArrayList<>();
    try (EtcdProcess etcd = EtcdProcess.start()) {
      etcdPid = ProcessHandle.current().children()
          .filter(p -> p.info().command().map(c -> c.endsWith("etcd")).orElse(false))
          .mapToLong(ProcessHandle::pid).findFirst().orElse(-1);
      String url = etcd.url("/meridian");
      log("etcd (pid %d) at %s", etcdPid, url);
      Fleet fleet = new Fleet(clusters, intOpt("endpoints"));
      Path config = work.resolve("fleet-" + clusters + ".yaml");
      fleet.writeMeridianYaml(config);
      Apply first = apply(url, config, false);
      log("initial apply: revision %d in %s", first.revision(),
          LoadGenerator.ms((first.exitNanos() - first.startNanos()) / 1e6));

      BenchClient.Shared shared = new BenchClient.Shared(clusters);
      java.util.function.IntFunction<ManagedChannel> channels = port -> LoadGenerator
          .channelBuilder(null, port, group, channelType, 256 * 1024 * 1024).build();
      for (int i = 0; i < intOpt("generator-warmup-runs"); i++) {
        rehearse(i, url, perReplica, delta, shared, channels, scheduler, timeoutMs);
      }

      for (int i = 0; i < n; i++) {
        replicas.add(startReplica(i, url));
      }
      for (Replica r : replicas) {
        awaitReady(r, 180_000);
      }
      log("%d replicas ready: %s", n, replicas.stream().map(r -> "pid " + r.pid() + " xds :"
          + r.xdsPort() + " admin :" + r.httpPort()).toList());

      List<Integer> ports = replicas.stream().map(Replica::xdsPort).toList();
      int total = n * perReplica;
      for (int i = 0; i < total; i++) {
        clients.add(new ReplicaClient(i, delta, shared, ports, i % n, channels, scheduler));
      }

      // 1. connect
      Cpu cpu = cpu();
      long t0 = connectAll(clients, timeoutMs, "connect");
      rows.add(row("connect", clients, clients, t0, null, -1, "", cpu, Double.NaN));

      // 2. one endpoint set changed by apply
      int k = clusters / 2;
      fleet.changeEndpoints(k);
      int port = Fleet.portFor(fleet.endpointGen(k));
      fleet.writeMeridianYaml(config); // before the clock
      awaitQuiet();
      cpu = cpu();
      t0 = System.nanoTime();
      for (ReplicaClient c : clients) {
        c.arm(ReplicaClient.Goal.ONE_ENDPOINT, port, k, t0);
      }
      Apply one = apply(url, config, false);
      await(clients, timeoutMs, "one-endpoint");
      settle(clients);
      long extra = clients.stream().mapToLong(ReplicaClient::resources).sum() - clients.size();
      rows.add(row("one-endpoint", clients, clients, t0, one, -1,
          "revision " + one.revision() + "; apply ran " + LoadGenerator.ms(
              (one.exitNanos() - one.startNanos()) / 1e6) + "; resources beyond the one: " + extra,
          cpu, one.cpu()));

      // 3. kill -9 of replica 0
      awaitQuiet();
      Replica killed = replicas.get(0);
      List<Replica> survivors = replicas.subList(1, n);
      List<ReplicaClient> moved = clients.stream().filter(c -> c.replica() == killed.index())
          .toList();
      long requestsBefore = 0;
      long responsesBefore = 0;
      for (Replica r : survivors) {
        String m = get(r, "/metrics");
        requestsBefore += sum(m, "meridian_requests_total{");
        responsesBefore += sum(m, "meridian_responses_total{");
      }
      long expectRequests = requestsBefore + 2L * moved.size();
      cpu = cpu();
      t0 = System.nanoTime();
      for (ReplicaClient c : clients) {
        c.arm(moved.contains(c) ? ReplicaClient.Goal.FAILOVER : ReplicaClient.Goal.NONE, 0, 0, t0);
      }
      cpu(); // the killed replica's last reading
      killed.process().destroyForcibly(); // SIGKILL
      long serverSideNanos = -1;
      long deadline = System.currentTimeMillis() + timeoutMs;
      while (System.currentTimeMillis() < deadline) {
        if (serverSideNanos < 0) {
          long requests = 0;
          for (Replica r : survivors) {
            requests += sum(get(r, "/metrics"), "meridian_requests_total{");
          }
          if (requests >= expectRequests) {
            serverSideNanos = System.nanoTime();
          }
        }
        if (serverSideNanos >= 0 && moved.stream().allMatch(ReplicaClient::done)) {
          break;
        }
        Thread.sleep(50);
      }
      settle(clients);
      Cpu failoverCpu = cpu(); // before the checks below: /clients of 1,500 streams is not cheap
      long resent = clients.stream().mapToLong(ReplicaClient::resources).sum();
      long responsesAfter = 0;
      int inSync = 0;
      java.util.Set<String> movedIds = new java.util.HashSet<>();
      moved.forEach(c -> movedIds.add(c.nodeId()));
      for (Replica r : survivors) {
        responsesAfter += sum(get(r, "/metrics"), "meridian_responses_total{");
        inSync += inSync(get(r, "/clients"), movedIds);
      }
      StringBuilder bySurvivor = new StringBuilder();
      for (Replica r : survivors) {
        Stats rs = new Stats(moved.stream().filter(c -> c.replica() == r.index())
            .mapToDouble(ReplicaClient::latencyMillis).filter(d -> !Double.isNaN(d)).toArray());
        bySurvivor.append(String.format(Locale.ROOT, "; to replica %d: %d, first %s, p50 %s, p99 %s",
            r.index(), rs.count(), LoadGenerator.ms(rs.min()), LoadGenerator.ms(rs.percentile(50)),
            LoadGenerator.ms(rs.percentile(99))));
      }
      String fleetFigure = serverSideNanos < 0 ? "not all resume requests reached the survivors"
          : "every resume request received by a survivor after "
              + LoadGenerator.ms((serverSideNanos - t0) / 1e6);
      rows.add(row("failover (kill -9 of 1 replica)", moved, moved, t0, null, resent,
          moved.size() + " clients moved; " + fleetFigure + "; survivors sent "
              + (responsesAfter - responsesBefore) + " responses; /clients in_sync " + inSync + "/"
              + moved.size() + bySurvivor, cpu, Double.NaN, failoverCpu));

      // 4. apply of --big-clusters clusters: every surviving replica serving it
      for (ReplicaClient c : clients) {
        c.close();
      }
      for (ReplicaClient c : clients) {
        c.awaitClosed(10_000);
      }
      int big = intOpt("big-clusters");
      Path bigConfig = work.resolve("fleet-" + big + ".yaml");
      new Fleet(big, intOpt("endpoints")).writeMeridianYaml(bigConfig);
      awaitQuiet();
      cpu = cpu();
      t0 = System.nanoTime();
      Apply bigApply = apply(url, bigConfig, true);
      double[] serving = new double[survivors.size()];
      java.util.Arrays.fill(serving, Double.NaN);
      deadline = System.currentTimeMillis() + timeoutMs;
      while (System.currentTimeMillis() < deadline) {
        boolean all = true;
        for (int i = 0; i < survivors.size(); i++) {
          if (Double.isNaN(serving[i])) {
            String m = get(survivors.get(i), "/metrics");
            if (sum(m, "meridian_resources{group=\"default\",type=\"CDS\"}") == big
                && sum(m, "meridian_resources{group=\"default\",type=\"EDS\"}") == big) {
              serving[i] = (System.nanoTime() - t0) / 1e6;
            } else {
              all = false;
            }
          }
        }
        if (all) {
          break;
        }
        Thread.sleep(20);
      }
      Cpu after = cpu();
      Stats s = new Stats(java.util.Arrays.stream(serving).filter(d -> !Double.isNaN(d)).toArray());
      double commitMs = (bigApply.commitNanos() - t0) / 1e6;
      rows.add(new Row("apply of " + String.format(Locale.ROOT, "%,d", big)
          + " clusters (--prune): replicas serving it", survivors.size(), s.count(), s,
          LoadGenerator.ms(s.max() - commitMs), -1,
          "replicas, not clients; revision " + bigApply.revision() + "; apply ran "
              + LoadGenerator.ms((bigApply.exitNanos() - bigApply.startNanos()) / 1e6)
              + ", committed at " + LoadGenerator.ms(commitMs),
          after.replicas() - cpu.replicas(), after.etcd() - cpu.etcd(), bigApply.cpu(),
          after.generator() - cpu.generator()));
    } finally {
      for (ReplicaClient c : clients) {
        c.close();
      }
      for (Replica r : replicas) {
        r.process().destroy();
        if (!r.process().waitFor(15, TimeUnit.SECONDS)) {
          r.process().destroyForcibly();
        }
      }
      scheduler.shutdownNow();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
    }
    String loadAfter = loadavg();
    StringBuilder out = new StringBuilder();
    out.append(String.format(Locale.ROOT, "%d replicas x %d %s clients, %d clusters x %s endpoints;"
        + " load average before: %s, after: %s%n", intOpt("replicas"), perReplica,
        opts.get("variant"), clusters, opts.get("endpoints"), loadBefore, loadAfter));
    out.append(HEADER).append('\n');
    rows.forEach(r -> out.append(r.render()).append('\n'));
    System.out.print(out);
    if (opts.containsKey("out")) {
      Files.writeString(Path.of(opts.get("out")), out, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    }
    return rows;
  }

  /**
   * The load generator's warm-up: {@code clients} clients connect to a throwaway replica, which is
   * then killed, and resume on a second one; nothing is recorded and both replicas are gone before
   * the measured ones start (cold). Without it the measured failover paid this JVM's first
   * compilation of the move (a resume, a new channel and connection per client: 40 % of the load
   * generator's CPU then, on the cores the survivors need), which a real fleet's clients each do
   * on their own machine.
   */
  private void rehearse(int run, String url, int clients, boolean delta, BenchClient.Shared shared,
      java.util.function.IntFunction<ManagedChannel> channels, ScheduledExecutorService scheduler,
      long timeoutMs) throws Exception {
    long start = System.nanoTime();
    List<Replica> throwaway = new ArrayList<>();
    List<ReplicaClient> rehearsal = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) {
        throwaway.add(startReplica(100 + 2 * run + i, url));
      }
      for (Replica r : throwaway) {
        awaitReady(r, 180_000);
      }
      List<Integer> ports = throwaway.stream().map(Replica::xdsPort).toList();
      for (int i = 0; i < clients; i++) {
        rehearsal.add(new ReplicaClient(i, delta, shared, ports, 0, channels, scheduler));
      }
      connectAll(rehearsal, timeoutMs, "rehearsal connect");
      long t0 = System.nanoTime();
      for (ReplicaClient c : rehearsal) {
        c.arm(ReplicaClient.Goal.FAILOVER, 0, 0, t0);
      }
      throwaway.get(0).process().destroyForcibly();
      await(rehearsal, timeoutMs, "rehearsal failover");
      settle(rehearsal);
    } finally {
      for (ReplicaClient c : rehearsal) {
        c.close();
      }
      for (ReplicaClient c : rehearsal) {
        c.awaitClosed(10_000);
      }
      for (Replica r : throwaway) {
        r.process().destroyForcibly();
        r.process().waitFor(15, TimeUnit.SECONDS);
      }
    }
    log("load generator rehearsal %d: connect and failover of %d clients, unrecorded, in %s",
        run + 1, clients, LoadGenerator.ms((System.nanoTime() - start) / 1e6));
  }

  /** Starts every client at once and waits until all hold everything; returns the start. */
  private static long connectAll(List<ReplicaClient> clients, long timeoutMs, String event)
      throws InterruptedException {
    long t0 = System.nanoTime();
    for (ReplicaClient c : clients) {
      c.arm(ReplicaClient.Goal.CONNECT, 0, 0, t0);
      c.start();
    }
    await(clients, timeoutMs, event);
    settle(clients);
    return t0;
  }

  /** CPU seconds so far of the replicas (alive ones), etcd and this process. */
  record Cpu(double replicas, double etcd, double generator) {}

  /** Each replica's CPU when last read: a killed one keeps its last reading. */
  private final Map<Integer, Double> lastCpu = new java.util.HashMap<>();

  private Cpu cpu() {
    double r = 0;
    for (Replica x : replicas) {
      double c = ProcStats.cpuSeconds(x.pid());
      if (!Double.isNaN(c) && x.process().isAlive()) {
        lastCpu.put(x.index(), c);
      }
      r += lastCpu.getOrDefault(x.index(), 0.0);
    }
    return new Cpu(r, etcdPid < 0 ? Double.NaN : ProcStats.cpuSeconds(etcdPid),
        ProcStats.cpuSeconds(ProcessHandle.current().pid()));
  }

  private Row row(String event, List<ReplicaClient> all, List<ReplicaClient> measured, long t0,
      Apply apply, long resent, String note, Cpu before, double applyCpu) {
    return row(event, all, measured, t0, apply, resent, note, before, applyCpu, null);
  }

  /** {@code after}: the CPU reading that ends the event (null: now). */
  private Row row(String event, List<ReplicaClient> all, List<ReplicaClient> measured, long t0,
      Apply apply, long resent, String note, Cpu before, double applyCpu, Cpu after) {
    double[] lat = measured.stream().mapToDouble(ReplicaClient::latencyMillis)
        .filter(d -> !Double.isNaN(d)).toArray();
    Stats s = new Stats(lat);
    String fromCommit = "-";
    if (apply != null) {
      double commitMs = (apply.commitNanos() - t0) / 1e6;
      fromCommit = LoadGenerator.ms(s.percentile(99) - commitMs) + " / "
          + LoadGenerator.ms(s.max() - commitMs);
    }
    int mismatches = all.stream().mapToInt(ReplicaClient::mismatches).sum();
    if (mismatches > 0) {
      note = note + (note.isEmpty() ? "" : "; ") + mismatches + " unexpected resources";
    }
    if (after == null) {
      after = cpu();
    }
    Row row = new Row(event, measured.size(), lat.length, s, fromCommit, resent, note,
        after.replicas() - before.replicas(), after.etcd() - before.etcd(),
        applyCpu, after.generator() - before.generator());
    log("%s", HEADER.lines().findFirst().orElse(""));
    log("%s", row.render());
    return row;
  }

  private Replica startReplica(int i, String url) throws IOException {
    int xds = LoadGenerator.freePort();
    int http = LoadGenerator.freePort();
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String f : opts.get("server-jvm").trim().split("\\s+")) {
      if (!f.isEmpty()) {
        cmd.add(f);
      }
    }
    cmd.addAll(List.of("-jar", opts.get("meridian-jar"), "serve", "--config", url,
        "--bind", "127.0.0.1", "--xds-port", Integer.toString(xds),
        "--http-port", Integer.toString(http)));
    cmd.addAll(LoadGenerator.ONE_PEER_FLAGS);
    Path log = work.resolve("replica-" + i + ".log");
    log("starting replica %d: %s", i, String.join(" ", cmd));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
        .start();
    Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly));
    return new Replica(i, p, xds, http, log);
  }

  private void awaitReady(Replica r, long timeoutMs) throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      if (!r.process().isAlive()) {
        throw new IllegalStateException("replica " + r.index() + " exited: "
            + Files.readString(r.log()));
      }
      try {
        HttpResponse<String> res = HTTP.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + r.httpPort() + "/readyz"))
            .timeout(java.time.Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
        if (res.statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException("replica " + r.index() + " not ready within " + timeoutMs
        + " ms");
  }

  private static final Pattern SUMMARY = Pattern.compile("\\(one transaction, revision (\\d+)\\)");

  /**
   * Runs {@code java -jar meridian.jar apply --config URL -f FILE [--prune]} as a user does; the
   * commit is when its summary line (printed after the transaction) is read.
   */
  private Apply apply(String url, Path file, boolean prune) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-jar", opts.get("meridian-jar"), "apply", "--config", url, "-f", file.toString()));
    if (prune) {
      cmd.add("--prune");
    }
    long start = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    long pid = p.pid();
    double[] lastCpu = {0};
    Thread sampler = new Thread(() -> {
      while (p.isAlive()) {
        double c = ProcStats.cpuSeconds(pid);
        if (!Double.isNaN(c)) {
          lastCpu[0] = c;
        }
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "apply-cpu");
    sampler.setDaemon(true);
    sampler.start();
    StringBuilder out = new StringBuilder();
    long commit = -1;
    long revision = -1;
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
        StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        Matcher m = SUMMARY.matcher(line);
        if (m.find()) {
          commit = System.nanoTime();
          revision = Long.parseLong(m.group(1));
        }
        if (!line.startsWith("unchanged ")) {
          out.append(line).append('\n');
        }
      }
    }
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("apply did not end within 120 s");
    }
    long exit = System.nanoTime();
    sampler.join(1000);
    if (p.exitValue() != 0 || commit < 0) {
      throw new IllegalStateException("apply failed (exit " + p.exitValue() + "): " + tail(out));
    }
    return new Apply(start, commit, exit, revision, lastCpu[0], tail(out));
  }

  private static String tail(StringBuilder s) {
    return s.length() > 2000 ? s.substring(s.length() - 2000) : s.toString();
  }

  /** Waits (bounded) until every client armed with a goal reached it. */
  private static void await(List<ReplicaClient> clients, long timeoutMs, String event)
      throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    long lastLog = System.currentTimeMillis();
    while (System.currentTimeMillis() < deadline) {
      long reached = clients.stream().filter(ReplicaClient::done).count();
      if (reached == clients.size()) {
        return;
      }
      if (System.currentTimeMillis() - lastLog > 5000) {
        lastLog = System.currentTimeMillis();
        log("  %s: %d/%d clients reached", event, reached, clients.size());
      }
      Thread.sleep(20);
    }
    Optional<ReplicaClient> failed = clients.stream().filter(c -> c.lastError() != null)
        .findFirst();
    log("  %s: timed out; e.g. %s", event, failed.map(c -> String.valueOf(c.lastError()))
        .orElse("no stream error"));
  }

  /** Waits until no client has received anything for a second (bounded: 30 s). */
  private static void settle(List<ReplicaClient> clients) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 30_000;
    long last = -1;
    long quietSince = System.currentTimeMillis();
    while (System.currentTimeMillis() < deadline) {
      long now = clients.stream().mapToLong(ReplicaClient::responses).sum();
      if (now != last) {
        last = now;
        quietSince = System.currentTimeMillis();
      } else if (System.currentTimeMillis() - quietSince >= 1000) {
        return;
      }
      Thread.sleep(50);
    }
  }

  /** Waits (at most 30 s) until the replicas together use under 5 % of a core over 250 ms. */
  private void awaitQuiet() throws InterruptedException {
    long deadline = System.currentTimeMillis() + 30_000;
    double last = cpu().replicas();
    while (System.currentTimeMillis() < deadline) {
      Thread.sleep(250);
      double now = cpu().replicas();
      if (now - last < 0.0125) {
        return;
      }
      last = now;
    }
  }

  private static final HttpClient HTTP = HttpClient.newBuilder()
      .connectTimeout(java.time.Duration.ofSeconds(5)).build();

  private static String get(Replica r, String path) throws InterruptedException {
    try {
      HttpResponse<String> res = HTTP.send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + r.httpPort() + path))
          .timeout(java.time.Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
      return res.body();
    } catch (IOException e) {
      return "";
    }
  }

  /** The sum of the samples of every metric line starting with {@code prefix}. */
  static long sum(String metrics, String prefix) {
    return metrics.lines().filter(l -> l.startsWith(prefix))
        .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1).trim())).sum();
  }

  /** How many of {@code nodes} a {@code /clients} answer shows connected and in sync. */
  static int inSync(String clientsJson, java.util.Set<String> nodes) {
    if (clientsJson.isEmpty()) {
      return 0;
    }
    int n = 0;
    JsonObject o = JsonParser.parseString(clientsJson).getAsJsonObject();
    for (JsonElement e : o.getAsJsonArray("clients")) {
      JsonObject c = e.getAsJsonObject();
      JsonElement id = c.get("node_id");
      if (id != null && !id.isJsonNull() && nodes.contains(id.getAsString())
          && c.get("in_sync").getAsBoolean()) {
        n++;
      }
    }
    return n;
  }

  private static String loadavg() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (IOException e) {
      return "?";
    }
  }

  static void log(String fmt, Object... args) {
    LoadGenerator.log(fmt, args);
  }
}
