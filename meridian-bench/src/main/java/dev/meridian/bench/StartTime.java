package dev.meridian.bench;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How long a fresh server process takes to answer its first xDS request (issue 18, section 5):
 * an ADS client that keeps retrying is started first, then the command, as a new process; the
 * figure is from just before the process is started to the client's first DiscoveryResponse
 * (wildcard CDS). Free loopback ports are appended to the command ({@code --xds-port},
 * {@code --http-port}); each run's process is stopped (SIGTERM) before the next starts. A first,
 * unrecorded run loads the client's own code (its HTTP/2 stream, its first request): a JVM's
 * cold client would add its class loading to the server's start.
 *
 * <pre>
 * java -cp meridian-bench/target/meridian-bench.jar dev.meridian.bench.StartTime --runs 10 \
 *   -- ./meridian serve --config examples/quickstart.yaml
 * </pre>
 */
public final class StartTime {
  /** How often the client retries a refused connection: the figure's resolution. */
  static final long RETRY_MILLIS = 10;

  private StartTime() {}

  static String usage() {
    return """
        Usage: StartTime [--runs N] [--timeout SECONDS] [--log-dir DIR] -- COMMAND...
          Starts COMMAND (e.g. ./meridian serve --config examples/quickstart.yaml) N times
          (default 10) as a fresh process with --xds-port and --http-port on free loopback
          ports appended, and prints the time from the process start to the first
          DiscoveryResponse of an ADS client that retries every 10 ms; then the median and max.
          A first run, not counted, warms the client up.
          --timeout: per run (default 60). --log-dir: each run's output (default target/start-time).
        """;
  }

  public static void main(String[] args) throws Exception {
    int runs = 10;
    long timeoutSeconds = 60;
    Path logDir = Path.of("target", "start-time");
    int i = 0;
    for (; i < args.length && !args[i].equals("--"); i++) {
      switch (args[i]) {
        case "--runs" -> runs = Integer.parseInt(args[++i]);
        case "--timeout" -> timeoutSeconds = Long.parseLong(args[++i]);
        case "--log-dir" -> logDir = Path.of(args[++i]);
        default -> {
          System.err.print("bad argument " + args[i] + "\n" + usage());
          System.exit(2);
        }
      }
    }
    List<String> command = i < args.length ? Arrays.asList(args).subList(i + 1, args.length)
        : List.of();
    if (command.isEmpty() || runs < 1) {
      System.err.print(usage());
      System.exit(2);
    }
    Files.createDirectories(logDir);
    System.out.printf(Locale.ROOT, "client warm-up run (not counted): %s%n",
        once(command, logDir.resolve("run-0.log"), timeoutSeconds));
    double[] millis = new double[runs];
    double[] cpu = new double[runs];
    for (int run = 0; run < runs; run++) {
      Run r = once(command, logDir.resolve("run-" + (run + 1) + ".log"), timeoutSeconds);
      millis[run] = r.millis();
      cpu[run] = r.serverCpuSeconds();
      System.out.printf(Locale.ROOT, "run %d: %s%n", run + 1, r);
    }
    Stats s = new Stats(millis);
    System.out.printf(Locale.ROOT, "process start to first DiscoveryResponse, %d runs: median %.0f ms,"
        + " max %.0f ms, min %.0f ms (server CPU by then: median %.2f s)%n", runs,
        s.percentile(50), s.max(), s.min(), new Stats(cpu).percentile(50));
  }

  /**
   * One run: from the process start to the first DiscoveryResponse, and the CPU the server's
   * process had used by then (all its threads: a figure a busy machine inflates less than time).
   */
  record Run(double millis, double serverCpuSeconds) {
    @Override
    public String toString() {
      return String.format(Locale.ROOT, "%.0f ms (server CPU %.2f s)", millis, serverCpuSeconds);
    }
  }

  static Run once(List<String> command, Path log, long timeoutSeconds) throws Exception {
    int xdsPort = LoadGenerator.freePort();
    List<String> cmd = new ArrayList<>(command);
    cmd.addAll(List.of("--xds-port", Integer.toString(xdsPort),
        "--http-port", Integer.toString(LoadGenerator.freePort())));
    Process process = null;
    try (FirstResponse first = new FirstResponse(xdsPort, "start-time")) {
      long started = System.nanoTime();
      process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
          .start();
      try {
        first.response.get(timeoutSeconds, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        throw new IllegalStateException("no DiscoveryResponse within " + timeoutSeconds
            + " s; see " + log, e);
      }
      long answered = first.nanos();
      double cpu = ProcStats.cpuSeconds(process.pid()); // ./meridian execs java: the same pid
      if (Files.readString(log).contains("meridian: building")) {
        // The launcher built the jar first: that run measured Maven, not the start.
        throw new IllegalStateException("the launcher built meridian.jar during the run; run again");
      }
      return new Run((answered - started) / 1e6, cpu);
    } finally {
      if (process != null) {
        stop(process);
      }
    }
  }

  /**
   * A wildcard CDS request over ADS to {@code 127.0.0.1:port}, made before the server is up: the
   * stream waits for ready instead of failing, and a refused connection is retried every
   * {@link #RETRY_MILLIS} (gRPC would back off by a second and more). {@link #response} completes
   * with the first answer. Closing stops the retries and the channel.
   */
  static final class FirstResponse implements AutoCloseable {
    final CompletableFuture<DiscoveryResponse> response = new CompletableFuture<>();
    private final ManagedChannel channel;
    private final ScheduledExecutorService retry = Executors.newSingleThreadScheduledExecutor(
        r -> {
          Thread t = new Thread(r, "start-time-retry");
          t.setDaemon(true);
          return t;
        });
    private volatile long nanos;

    FirstResponse(int xdsPort, String nodeId) {
      channel = NettyChannelBuilder.forAddress("127.0.0.1", xdsPort).usePlaintext().build();
      StreamObserver<DiscoveryRequest> out = AggregatedDiscoveryServiceGrpc.newStub(channel)
          .withWaitForReady().streamAggregatedResources(new StreamObserver<>() {
            @Override
            public void onNext(DiscoveryResponse r) {
              nanos = System.nanoTime();
              response.complete(r);
            }

            @Override
            public void onError(Throwable t) {
              response.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {}
          });
      out.onNext(DiscoveryRequest.newBuilder()
          .setNode(Node.newBuilder().setId(nodeId).setCluster("bench"))
          .setTypeUrl(BenchClient.CDS).build());
      retry.scheduleWithFixedDelay(() -> BenchClient.retryNow(channel), RETRY_MILLIS, RETRY_MILLIS,
          TimeUnit.MILLISECONDS);
    }

    /** When the first response arrived ({@link System#nanoTime}); valid once it has. */
    long nanos() {
      return nanos;
    }

    @Override
    public void close() {
      retry.shutdownNow();
      channel.shutdownNow();
    }
  }

  /** SIGTERM (a graceful shutdown), then, if it hangs, SIGKILL. */
  static void stop(Process process) throws InterruptedException, IOException {
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
  }
}
