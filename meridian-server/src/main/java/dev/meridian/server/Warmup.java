package dev.meridian.server;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.meridian.config.ConfigException;
import dev.meridian.config.ConfigLoader;
import dev.meridian.config.ReferenceCheck;
import dev.meridian.protocol.LogLine;
import dev.meridian.protocol.ResourceType;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Startup warm-up: before the xDS port opens, a private copy of the server (its own hub and gRPC
 * server on an ephemeral loopback port, the same stream pool and handlers) serves a synthetic fleet
 * of SotW and Delta ADS clients in this JVM through the events a real fleet brings: connect, every
 * cluster changed, one endpoint set changed, a burst of changes, reconnects; each change goes
 * through the config loader from a file, as a reload does.
 *
 * <p>Why: a fresh JVM interprets, then compiles, the push paths while the first clients connect;
 * measured on 2 cores that doubles a 1,000-client connect (docs/benchmarks.md, round 5). Running
 * the same code first, on loopback and with nothing a client of the real port can see, moves that
 * compile work before the port opens. Nothing of it stays: the private server, its streams and the
 * temp config are gone when {@link #run} returns, and a warm-up that fails only logs.
 *
 * <p>How long: rounds go on until the JIT has caught up (its queue empty and a round's compile
 * time small beside the round) or the budget is spent. A fixed 8 rounds were not enough on 2
 * cores: the one C2 thread was still ~100 tasks behind when the warm-up stopped, and HotSpot drops
 * queued tasks of methods that go quiet, so the fleet's first events compiled them again
 * (docs/benchmarks.md, round 6).
 */
final class Warmup {
  private static final System.Logger LOG = System.getLogger("dev.meridian.server");
  /** Why a warm-up ended. */
  enum End {
    /** The JIT caught up: its queue was empty and compiled little during the last round. */
    SETTLED,
    /** The most rounds asked for (tests) were run. */
    ROUNDS,
    /** The budget left no room for another round, or ran out during an event. */
    BUDGET,
    /** The server is shutting down. */
    STOPPED;

    String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /**
   * What a warm-up did. {@code pushPathOptimized}: how many of {@link #PUSH_PATH} ran C2 code
   * when it ended (-1 where the JVM does not tell).
   */
  record Report(int rounds, int events, long responses, long millis, End end, int jitQueue,
      int pushPathOptimized) {}

  /**
   * The methods every push and ACK runs, per stream, in both variants: too big to be inlined, so
   * each gets code of its own. Measured on 2 cores (docs/benchmarks.md, round 8): when these were
   * still C1 code as the port opened, the first push to 10,000 streams took up to half as long
   * again.
   */
  static final List<String> PUSH_PATH = List.of(
      "dev.meridian.protocol.XdsStream.onConfig",
      "dev.meridian.protocol.XdsStream.onRequest",
      "dev.meridian.protocol.DeltaTypeState.respond",
      "dev.meridian.protocol.DeltaTypeState.onRequest",
      "dev.meridian.protocol.SotwTypeState.respond",
      "dev.meridian.protocol.SotwTypeState.onRequest",
      "dev.meridian.server.StreamHandler.carryOut");

  /**
   * What the warm-up asks of the JIT compiler, to know when it has caught up. Either figure is -1
   * where the JVM does not tell.
   */
  interface Jit {
    /** Total milliseconds spent compiling so far. */
    long compileMillis();

    /** Methods waiting in the compile queues now. */
    int queued();

    /**
     * How many of {@code methods} ("package.Class.method", any overload) run code of the top tier
     * (C2) now; -1 where the JVM does not tell.
     */
    default int optimized(List<String> methods) {
      return -1;
    }

    /** HotSpot's figures: the compilation MXBean and the Compiler.queue diagnostic command. */
    static Jit hotspot() {
      java.lang.management.CompilationMXBean compilation =
          java.lang.management.ManagementFactory.getCompilationMXBean();
      return new Jit() {
        @Override
        public long compileMillis() {
          return compilation != null && compilation.isCompilationTimeMonitoringSupported()
              ? compilation.getTotalCompilationTime() : -1;
        }

        @Override
        public int queued() {
          String out = diagnostic("compilerQueue");
          return out == null ? -1 : queuedTasks(out);
        }

        @Override
        public int optimized(List<String> methods) {
          String out = diagnostic("compilerCodelist");
          return out == null ? -1 : optimizedIn(out, methods);
        }
      };
    }

    /** The output of a HotSpot diagnostic command (as jcmd runs it), or null if there is none. */
    private static String diagnostic(String operation) {
      try {
        return String.valueOf(java.lang.management.ManagementFactory.getPlatformMBeanServer()
            .invoke(new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"),
                operation, new Object[] {null}, new String[] {String[].class.getName()}));
      } catch (javax.management.JMException | RuntimeException e) {
        return null;
      }
    }

    /**
     * Counts the {@code methods} with code of level 4 in use in {@code jcmd Compiler.codelist}
     * output: one line per compiled method, "compile-id level state name(signature) [addresses]";
     * state 0 is in use (1 and up: not entrant, on its way out).
     */
    static int optimizedIn(String codelist, List<String> methods) {
      java.util.Set<String> found = new java.util.HashSet<>();
      for (String line : (Iterable<String>) codelist.lines()::iterator) {
        String[] f = line.strip().split(" ", 4);
        if (f.length < 4 || !f[1].equals("4") || !f[2].equals("0")) {
          continue;
        }
        int paren = f[3].indexOf('(');
        if (paren > 0 && methods.contains(f[3].substring(0, paren))) {
          found.add(f[3].substring(0, paren));
        }
      }
      return found.size();
    }

    /**
     * Counts the queued tasks in {@code jcmd Compiler.queue} output: under each "... compile
     * queue:" heading, one line per task (starting with its compile id), or "Empty".
     */
    static int queuedTasks(String out) {
      int tasks = 0;
      boolean inQueue = false;
      for (String line : (Iterable<String>) out.lines()::iterator) {
        String t = line.strip();
        if (t.endsWith("compile queue:")) {
          inQueue = true;
        } else if (t.endsWith(":")) {
          inQueue = false; // "Current compiles:" lists running ones, not queued
        } else if (inQueue && !t.isEmpty() && Character.isDigit(t.charAt(0))) {
          tasks++;
        }
      }
      return tasks;
    }
  }

  // Sized by measurement (docs/benchmarks.md, round 5): 5,000 clusters instead of 1,000 saved
  // little more server CPU at the first big connect and pushed peak RSS past 2 GiB.
  static final int CLUSTERS = 1000;
  static final int CLIENTS = 200;
  /** Rounds before the JIT's figures may end the warm-up (the first rounds always compile). */
  static final int MIN_ROUNDS = 3;
  /**
   * Committed heap past which a round ends with a full GC: the warm-up's live set is small (~80
   * MiB), but G1 grows its young generation to ~2 GiB over 20 s of warm-up garbage, which would
   * stay as the process's peak RSS (docs/benchmarks.md, round 6).
   */
  static final long HEAP_BOUND = 768L << 20;
  /** One-endpoint changes per round: small pushes are the most frequent event in a fleet. */
  static final int SMALL_CHANGES = 8;
  /**
   * Reloads per round that come back to back, each before the last has reached the clients (one
   * event): a change landing on un-ACKed pushes and queued stream work takes branches that one
   * change at a time never does. Left cold, the fleet's first burst met them in compiled push code
   * and threw that code back to the interpreter (docs/benchmarks.md, round 8).
   */
  static final int BURST = 4;
  private static final String PREFIX = "warmup-";
  private static final int BASE_PORT = 10000;

  private final BiFunction<InetSocketAddress, DiscoveryHub, Server> servers;
  private final Supplier<DiscoveryHub> hubs;
  private final int clusters;
  private final int clientCount;
  private final int rounds;
  private final Jit jit;
  private Path tempRoot;

  /**
   * @param servers builds (does not start) the xDS gRPC server for an address and hub, as the real
   *     one is built, so that the warm-up runs the same transport settings and handlers
   * @param hubs makes the private hub (fanning out as the real one does)
   */
  Warmup(BiFunction<InetSocketAddress, DiscoveryHub, Server> servers,
      Supplier<DiscoveryHub> hubs) {
    this(servers, hubs, CLUSTERS, CLIENTS, Integer.MAX_VALUE, Jit.hotspot());
  }

  /** @param rounds the most rounds; the JIT settling or the budget may end it before */
  Warmup(BiFunction<InetSocketAddress, DiscoveryHub, Server> servers,
      Supplier<DiscoveryHub> hubs, int clusters, int clientCount, int rounds, Jit jit) {
    this.servers = servers;
    this.hubs = hubs;
    this.clusters = clusters;
    this.clientCount = clientCount;
    this.rounds = rounds;
    this.jit = jit;
  }

  // What the clients are to reach: every cluster at this generation (its connect timeout in
  // seconds), the probed endpoint set at this port.
  private volatile int clusterGen = 1;
  private volatile int probePort = BASE_PORT;
  private final Object monitor = new Object();
  private int reached;
  private int epoch;
  private final AtomicLong responses = new AtomicLong();

  /** Where the synthetic config file goes (in a directory of its own, removed after): tests. */
  Warmup inDirectory(Path root) {
    this.tempRoot = root;
    return this;
  }

  /**
   * Runs the warm-up for at most {@code budget}, or until {@code stop} says so (checked between
   * events: a shutdown during the warm-up); returns what it did.
   */
  Report run(Duration budget, java.util.function.BooleanSupplier stop)
      throws IOException, ConfigException, InterruptedException {
    long started = System.nanoTime();
    long deadline = started + budget.toNanos();
    Path dir = tempRoot == null ? Files.createTempDirectory("meridian-warmup")
        : Files.createTempDirectory(tempRoot, "meridian-warmup");
    Path file = dir.resolve("warmup.json");
    DiscoveryHub hub = hubs.get();
    ConfigLoader loader = new ConfigLoader();
    Server server = null;
    List<WarmupClient<?, ?>> clients = new ArrayList<>();
    List<WarmupClient<?, ?>> retired = new ArrayList<>(); // reconnected: closed, awaited at the end
    int round = 0;
    int events = 0;
    End end = End.BUDGET;
    try {
      reload(loader, file, hub);
      server = servers.apply(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), hub)
          .start();
      int port = ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
      List<String> names = new ArrayList<>(clusters);
      for (int i = 0; i < clusters; i++) {
        names.add(PREFIX + i);
      }
      arm();
      for (int i = 0; i < clientCount; i++) {
        clients.add(connect(port, i, names));
      }
      boolean ok = await(clients.size(), deadline);
      events++;
      long lastRound = 0;
      while (ok) {
        if (stop.getAsBoolean()) {
          end = End.STOPPED;
          break;
        }
        if (round == rounds) {
          end = End.ROUNDS;
          break;
        }
        if (deadline - System.nanoTime() < lastRound * 3 / 2) {
          break; // no room for another round: end = BUDGET
        }
        long roundStart = System.nanoTime();
        long compiled = jit.compileMillis();
        clusterGen++;
        ok = change(loader, file, hub, clients.size(), deadline);
        events++;
        for (int j = 0; ok && j < SMALL_CHANGES; j++) {
          probePort++;
          ok = change(loader, file, hub, clients.size(), deadline);
          events++;
        }
        if (ok) {
          ok = burst(loader, file, hub, clients.size(), deadline);
          events++;
        }
        if (ok) {
          // A quarter of the fleet reconnects: new connections and first requests again.
          arm();
          int reconnected = 0;
          for (int i = round % 4; i < clients.size(); i += 4) {
            retired.add(clients.get(i));
            clients.get(i).close();
            clients.set(i, connect(port, i, names));
            reconnected++;
          }
          ok = await(reconnected, deadline);
          events++;
        }
        if (!ok) {
          break; // the budget ran out during an event: end = BUDGET
        }
        round++;
        lastRound = System.nanoTime() - roundStart;
        retired.removeIf(WarmupClient::closedNow); // rounds are many: keep the list short
        if (Runtime.getRuntime().totalMemory() > HEAP_BOUND) {
          System.gc(); // the peak RSS would keep the warm-up's young generation: see HEAP_BOUND
        }
        if (round >= MIN_ROUNDS && settled(compiled, lastRound)) {
          end = End.SETTLED;
          break;
        }
      }
    } finally {
      // Clients half-close and the server ends their streams: no write races a cancelled stream.
      for (WarmupClient<?, ?> c : clients) {
        c.close();
      }
      clients.addAll(retired);
      long closeBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
      for (WarmupClient<?, ?> c : clients) {
        if (!c.channel.awaitTermination(Math.max(0, closeBy - System.nanoTime()),
            TimeUnit.NANOSECONDS)) {
          c.channel.shutdownNow();
        }
      }
      if (server != null) {
        server.shutdown();
        if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
          server.shutdownNow();
          server.awaitTermination(2, TimeUnit.SECONDS);
        }
      }
      deleteTree(dir);
    }
    int queued = jit.queued();
    int optimized = jit.optimized(PUSH_PATH);
    // Hand back the warm-up's garbage and heap growth before the real fleet comes.
    System.gc();
    return new Report(round, events, responses.get(),
        (System.nanoTime() - started) / 1_000_000, end, queued, optimized);
  }

  /**
   * The JIT has caught up with what the rounds run: nothing queued, the last round spent under a
   * tenth of its time compiling, and the push path runs C2 code (where the JVM tells). Unknown
   * queue or compile time never settle it (the budget ends the warm-up).
   */
  private boolean settled(long compiledBefore, long roundNanos) {
    long compiledNow = jit.compileMillis();
    if (jit.queued() != 0 || compiledBefore < 0 || compiledNow < 0
        || (compiledNow - compiledBefore) * 10 > roundNanos / 1_000_000) {
      return false;
    }
    int optimized = jit.optimized(PUSH_PATH);
    return optimized < 0 || optimized == PUSH_PATH.size();
  }

  /** Starts counting clients that reach the current target. */
  private void arm() {
    synchronized (monitor) {
      epoch++;
      reached = 0;
    }
  }

  private boolean change(ConfigLoader loader, Path file, DiscoveryHub hub, int expected,
      long deadline) throws IOException, ConfigException, InterruptedException {
    long t0 = System.nanoTime();
    arm();
    reload(loader, file, hub);
    boolean ok = await(expected, deadline);
    LOG.log(System.Logger.Level.DEBUG, () -> LogLine.of("warmup_event")
        .kv("cluster_gen", clusterGen).kv("probe_port", probePort).kv("reached", ok)
        .kv("ms", (System.nanoTime() - t0) / 1_000_000).toString());
    return ok;
  }

  /**
   * {@link #BURST} endpoint changes reloaded without waiting in between; the clients count once
   * they hold the last (what came between may have been coalesced away, as the protocol allows).
   */
  private boolean burst(ConfigLoader loader, Path file, DiscoveryHub hub, int expected,
      long deadline) throws IOException, ConfigException, InterruptedException {
    int first = probePort + 1;
    probePort += BURST; // the target: a client holding an earlier one of the burst is not counted
    arm();
    for (int k = 0; k < BURST; k++) {
      reload(loader, file, hub, first + k);
    }
    return await(expected, deadline);
  }

  /** Waits until {@code expected} clients reached the target, or the budget is spent. */
  private boolean await(int expected, long deadline) throws InterruptedException {
    synchronized (monitor) {
      while (reached < expected) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(monitor, left);
      }
      return true;
    }
  }

  /** A client saw the target: counted once per epoch. */
  private void check(WarmupClient<?, ?> c) {
    if (c.clusterGen != clusterGen || c.port != probePort) {
      return;
    }
    synchronized (monitor) {
      if (c.epoch != epoch) {
        c.epoch = epoch;
        reached++;
        monitor.notifyAll();
      }
    }
  }

  /** Writes the synthetic config and loads it as a reload would: file, loader, checks, hub. */
  private void reload(ConfigLoader loader, Path file, DiscoveryHub hub)
      throws IOException, ConfigException {
    reload(loader, file, hub, probePort);
  }

  /** As above, with the probed endpoint set at {@code probed}. */
  private void reload(ConfigLoader loader, Path file, DiscoveryHub hub, int probed)
      throws IOException, ConfigException {
    StringBuilder json = new StringBuilder(clusters * 400).append("{\"resources\":[\n");
    for (int i = 0; i < clusters; i++) {
      int port = i == probe() ? probed : BASE_PORT;
      json.append("{\"@type\":\"type.googleapis.com/envoy.config.cluster.v3.Cluster\",\"name\":\"")
          .append(PREFIX).append(i).append("\",\"type\":\"EDS\",\"connectTimeout\":\"")
          .append(clusterGen).append("s\",\"edsClusterConfig\":{\"edsConfig\":{\"ads\":{},")
          .append("\"resourceApiVersion\":\"V3\"}}},\n")
          .append("{\"@type\":\"type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment\",")
          .append("\"clusterName\":\"").append(PREFIX).append(i)
          .append("\",\"endpoints\":[{\"lbEndpoints\":[{\"endpoint\":{\"address\":{\"socketAddress\":")
          .append("{\"address\":\"127.0.0.1\",\"portValue\":").append(port)
          .append("}}}},{\"endpoint\":{\"address\":{\"socketAddress\":{\"address\":\"127.0.0.2\",")
          .append("\"portValue\":").append(port).append("}}}}]}]}")
          .append(i == clusters - 1 ? "\n" : ",\n");
    }
    json.append("]}\n");
    Files.writeString(file, json, StandardCharsets.UTF_8);
    ConfigLoader.Loaded loaded = loader.load(ConfigLoader.read(file));
    ReferenceCheck.problems(loaded.config()); // run as a reload runs it; the config has none
    hub.update(loaded.config());
  }

  private int probe() {
    return clusters / 2;
  }

  private WarmupClient<?, ?> connect(int port, int i, List<String> names) {
    ManagedChannel channel = NettyChannelBuilder.forAddress(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), port))
        .usePlaintext().directExecutor().maxInboundMessageSize(64 * 1024 * 1024).build();
    Node node = Node.newBuilder().setId(PREFIX + i).build();
    WarmupClient<?, ?> c = i % 2 == 0 ? new SotwClient(channel, node, names)
        : new DeltaClient(channel, node, names);
    c.start();
    return c;
  }

  /** Reads what the client holds of the cluster or endpoint set it watches (name: Delta only). */
  private void observe(WarmupClient<?, ?> c, boolean clusters, String name, Any any) {
    if (clusters) {
      observeCluster(c, name, any);
    } else {
      observeEndpoints(c, name, any);
    }
  }

  private void observeCluster(WarmupClient<?, ?> c, String name, Any any) {
    if (name == null || name.equals(PREFIX + 0)) {
      try {
        Cluster cluster = Cluster.parseFrom(any.getValue());
        if (cluster.getName().equals(PREFIX + 0)) {
          c.clusterGen = (int) cluster.getConnectTimeout().getSeconds();
        }
      } catch (InvalidProtocolBufferException e) {
        // not reached: the budget ends the warm-up
      }
    }
  }

  private void observeEndpoints(WarmupClient<?, ?> c, String name, Any any) {
    if (name == null || name.equals(PREFIX + probe())) {
      try {
        ClusterLoadAssignment cla = ClusterLoadAssignment.parseFrom(any.getValue());
        if (cla.getClusterName().equals(PREFIX + probe())) {
          c.port = cla.getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress()
              .getSocketAddress().getPortValue();
        }
      } catch (InvalidProtocolBufferException e) {
        // not reached: the budget ends the warm-up
      }
    }
  }

  /**
   * One synthetic ADS client: wildcard CDS, then EDS for every cluster, ACKing everything.
   * Requests are sent under the client's lock (gRPC observers are not thread-safe).
   *
   * @param <Q> request message
   * @param <R> response message
   */
  private abstract static class WarmupClient<Q, R> implements StreamObserver<R> {
    final ManagedChannel channel;
    final Node node;
    final List<String> names;
    volatile int clusterGen;
    volatile int port;
    int epoch; // guarded by the warm-up's monitor
    StreamObserver<Q> requests;
    boolean closed;

    WarmupClient(ManagedChannel channel, Node node, List<String> names) {
      this.channel = channel;
      this.node = node;
      this.names = names;
    }

    abstract void start();

    /** Half-closes the stream (the server then ends it) and lets the channel go once it has. */
    synchronized void close() {
      if (!closed) {
        closed = true;
        requests.onCompleted();
      }
      channel.shutdown();
    }

    /** Its channel has terminated: nothing left to await. */
    boolean closedNow() {
      return channel.isTerminated();
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onCompleted() {}
  }

  private final class SotwClient extends WarmupClient<DiscoveryRequest, DiscoveryResponse> {
    private String edsVersion = "";
    private String edsNonce = "";

    SotwClient(ManagedChannel channel, Node node, List<String> names) {
      super(channel, node, names);
    }

    @Override
    void start() {
      requests = AggregatedDiscoveryServiceGrpc.newStub(channel).streamAggregatedResources(this);
      requests.onNext(DiscoveryRequest.newBuilder().setNode(node)
          .setTypeUrl(ResourceType.CLUSTER.typeUrl()).build());
    }

    @Override
    public synchronized void onNext(DiscoveryResponse r) {
      responses.incrementAndGet();
      if (closed) {
        return;
      }
      boolean clusters = r.getTypeUrl().equals(ResourceType.CLUSTER.typeUrl());
      for (Any any : r.getResourcesList()) {
        observe(this, clusters, null, any);
      }
      requests.onNext(DiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl())
          .setVersionInfo(r.getVersionInfo()).setResponseNonce(r.getNonce())
          .addAllResourceNames(clusters ? List.of() : names).build());
      if (clusters) {
        // As Envoy after a CDS update: the clusters warm, asking for their endpoints again.
        requests.onNext(DiscoveryRequest.newBuilder().setTypeUrl(ResourceType.ENDPOINT.typeUrl())
            .setVersionInfo(edsVersion).setResponseNonce(edsNonce).addAllResourceNames(names)
            .build());
      } else {
        edsVersion = r.getVersionInfo();
        edsNonce = r.getNonce();
      }
      check(this);
    }

  }

  private final class DeltaClient
      extends WarmupClient<DeltaDiscoveryRequest, DeltaDiscoveryResponse> {

    DeltaClient(ManagedChannel channel, Node node, List<String> names) {
      super(channel, node, names);
    }

    @Override
    void start() {
      requests = AggregatedDiscoveryServiceGrpc.newStub(channel).deltaAggregatedResources(this);
      requests.onNext(DeltaDiscoveryRequest.newBuilder().setNode(node)
          .setTypeUrl(ResourceType.CLUSTER.typeUrl()).build());
    }

    @Override
    public synchronized void onNext(DeltaDiscoveryResponse r) {
      responses.incrementAndGet();
      if (closed) {
        return;
      }
      boolean clusters = r.getTypeUrl().equals(ResourceType.CLUSTER.typeUrl());
      for (Resource res : r.getResourcesList()) {
        observe(this, clusters, res.getName(), res.getResource());
      }
      requests.onNext(DeltaDiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl())
          .setResponseNonce(r.getNonce()).build());
      if (clusters && r.getResourcesCount() > 0) {
        // Warming: the changed clusters' endpoints are asked for again.
        requests.onNext(DeltaDiscoveryRequest.newBuilder()
            .setTypeUrl(ResourceType.ENDPOINT.typeUrl()).addAllResourceNamesSubscribe(names)
            .build());
      }
      check(this);
    }

  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // a temp dir left behind is harmless
    }
  }
}
