package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.client.Bootstrap;
import dev.meridian.client.ResourceUpdate;
import dev.meridian.client.ResourceWatcher;
import dev.meridian.client.XdsClient;
import dev.meridian.client.XdsError;
import dev.meridian.internal.server.MeridianServer;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * A fleet whose endpoints do not fit in gRPC's default 4 MiB message: the CLI and the client
 * library read it by default, a response over {@code --max-response-bytes} ends the command with
 * one line naming the flag (never a retry loop), and the server logs the client that hung up
 * mid-write in one line. One server for all the scenarios: its config is 80,000 endpoints.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LargeFleetTest {
  static final int SERVICES = 800;
  static final int PER_SERVICE = 100;

  private MeridianServer server;
  /** Every log record of the JVM while the scenarios run (the server's and gRPC's). */
  private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
  private final Handler capture = new Handler() {
    @Override
    public void publish(LogRecord r) {
      logged.add(r);
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };
  /** Held: java.util.logging keeps loggers only weakly. */
  private final List<Logger> loggers = List.of(Logger.getLogger("io.grpc"),
      Logger.getLogger("dev.meridian"));
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    Path config = dir.resolve("fleet.json");
    Files.writeString(config, fleet());
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 1000))
        .start();
    // The CLI's commands replace the root logger's handlers: listen below it.
    for (Logger l : loggers) {
      l.addHandler(capture);
    }
  }

  @AfterAll
  void stop() {
    for (Logger l : loggers) {
      l.removeHandler(capture);
    }
    server.close();
  }

  /**
   * 500 services of 100 endpoints, each with the host name and weight a Kubernetes fleet carries:
   * some 6.6 MiB in one SotW response.
   */
  static String fleet() {
    StringBuilder sb = new StringBuilder(12 << 20).append("{\"resources\": [\n");
    for (int s = 0; s < SERVICES; s++) {
      sb.append(s == 0 ? "" : ",\n").append("{\"@type\": \"type.googleapis.com/envoy.config.")
          .append("endpoint.v3.ClusterLoadAssignment\", \"cluster_name\": \"service-")
          .append(s).append("\", \"endpoints\": [{\"locality\": {\"zone\": \"zone-a\"}, ")
          .append("\"lb_endpoints\": [");
      for (int e = 0; e < PER_SERVICE; e++) {
        sb.append(e == 0 ? "" : ", ").append("{\"endpoint\": {\"address\": {\"socket_address\": ")
            .append("{\"address\": \"10.").append(s / 250).append('.').append(s % 250).append('.')
            .append(e).append("\", \"port_value\": 8080}}, \"hostname\": \"service-").append(s)
            .append("-7f9c8d6b5-").append(e).append(".prod.svc.cluster.local\"}, ")
            .append("\"health_status\": \"HEALTHY\", \"load_balancing_weight\": 1}");
      }
      sb.append("]}]}");
    }
    return sb.append("\n]}\n").toString();
  }

  private String addr() {
    return "127.0.0.1:" + server.xdsPort();
  }

  private int run(String... args) {
    out.reset();
    err.reset();
    return run(out, err, args);
  }

  /** {@code meridian args...} through Main's command line, get, watch and resolve printing here. */
  static int run(ByteArrayOutputStream out, ByteArrayOutputStream err, String... args) {
    PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
    PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
    CommandLine.IFactory factory = new CommandLine.IFactory() {
      @Override
      public <K> K create(Class<K> cls) throws Exception {
        if (cls == GetCommand.class) {
          return cls.cast(new GetCommand(o, e));
        } else if (cls == WatchCommand.class) {
          return cls.cast(new WatchCommand(o, e));
        } else if (cls == ResolveCommand.class) {
          return cls.cast(new ResolveCommand(o, e));
        }
        return CommandLine.defaultFactory().create(cls);
      }
    };
    return Main.commandLine(factory).setOut(new java.io.PrintWriter(o, true))
        .setErr(new java.io.PrintWriter(e, true)).execute(args);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void getReadsAFleetLargerThanGrpcsDefaultMessageSize() {
    assertThat(run("get", "endpoints", "--server", addr(), "-o", "name")).as(err()).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8).lines()).hasSize(SERVICES)
        .contains("endpoints/service-0", "endpoints/service-799");
  }

  @Test
  void atGrpcsDefaultOfFourMiBTheFleetIsRefusedWithOneLineNamingTheFlag() {
    long start = System.nanoTime();
    assertThat(run("get", "endpoints", "--server", addr(), "--max-response-bytes", "4MiB"))
        .isEqualTo(GetCommand.UNREACHABLE);
    assertThat(System.nanoTime() - start).as("no wait for a timeout")
        .isLessThan(TimeUnit.SECONDS.toNanos(8));
    assertThat(err()).matches("meridian get: cannot get endpoints: a response of \\d+ bytes from "
        + addr().replace(".", "\\.") + " exceeds the client's limit of 4194304 bytes "
        + "\\(max response bytes\\): raise --max-response-bytes\n");
    assertThat(out.size()).isZero();
  }

  @Test
  void watchPastMaxResponseBytesEndsWithOneLineInsteadOfRetrying() throws Exception {
    CompletableFuture<Integer> rc = CompletableFuture.supplyAsync(() -> run("watch", "--type",
        "endpoints", "--server", addr(), "--max-response-bytes", "1MiB", "-o", "json"));
    assertThat(rc.get(20, TimeUnit.SECONDS)).isEqualTo(GetCommand.UNREACHABLE);
    assertThat(err()).startsWith("meridian watch: a response of ")
        .endsWith(" exceeds the client's limit of 1048576 bytes (max response bytes): "
            + "raise --max-response-bytes\n")
        .hasLineCount(1);
    assertThat(out.size()).isZero();
  }

  @Test
  void statusPastMaxResponseBytesSaysWhichFlagToRaise() throws Exception {
    Node node = Node.newBuilder().setId("fleet-watcher").build();
    try (XdsClient client = XdsClient.create(Bootstrap.forServer(addr(), node, null),
        XdsClient.Options.defaults())) {
      Events events = new Events();
      client.watchAll(ResourceType.ENDPOINT, events); // CSDS then lists its 800 resources
      assertThat(events.processed.poll(20, TimeUnit.SECONDS)).isNotNull();
      assertThat(run("status", "--server", addr(), "--max-response-bytes", "1KiB"))
          .isEqualTo(3);
      assertThat(err()).startsWith("meridian status: a response of ")
          .endsWith(" exceeds the client's limit of 1024 bytes (max response bytes): "
              + "raise --max-response-bytes\n")
          .hasLineCount(1);
      assertThat(run("status", "--server", addr())).as(err()).isZero();
    }
  }

  @Test
  void aMaxResponseBytesThatIsNoSizeIsAUsageError() {
    assertThat(run("get", "endpoints", "--server", addr(), "--max-response-bytes", "4XB"))
        .isEqualTo(2);
    assertThat(err()).contains("'4XB' is not a size in bytes from 1 to 2GiB: use e.g. "
        + "268435456, 64MiB or 1GiB");
  }

  @Test
  void theClientLibraryReadsTheFleetByDefaultAndNamesItsLimitWhenSmaller() throws Exception {
    Node node = Node.newBuilder().setId("library").build();
    try (XdsClient client = XdsClient.create(Bootstrap.forServer(addr(), node, null),
        XdsClient.Options.defaults())) {
      Events events = new Events();
      client.watchAll(ResourceType.ENDPOINT, events);
      assertThat(events.processed.poll(20, TimeUnit.SECONDS)).as("a response").isNotNull();
      assertThat(events.updates).hasSize(SERVICES);
    }
    try (XdsClient client = XdsClient.create(Bootstrap.forServer(addr(), node, null),
        XdsClient.Options.defaults().withMaxResponseBytes(4 << 20))) {
      Events events = new Events();
      client.watchAll(ResourceType.ENDPOINT, events);
      XdsError e = events.errors.poll(20, TimeUnit.SECONDS);
      assertThat(e).isNotNull();
      assertThat(e.kind()).isEqualTo(XdsError.Kind.RESPONSE_TOO_LARGE);
      assertThat(e.message()).contains("exceeds the client's limit of 4194304 bytes");
    }
  }

  @Test
  void theServerLogsAClientThatClosedMidWriteInOneLineWithoutAStackTrace() throws Exception {
    loggers.get(1).setLevel(java.util.logging.Level.INFO); // serve's default (a get set warn)
    logged.clear();
    Node node = Node.newBuilder().setId("small-limit").build();
    try (XdsClient client = XdsClient.create(Bootstrap.forServer(addr(), node, null),
        XdsClient.Options.defaults().withMaxResponseBytes(1 << 20))) {
      Events events = new Events();
      client.watchAll(ResourceType.ENDPOINT, events);
      assertThat(events.errors.poll(20, TimeUnit.SECONDS)).isNotNull();
    }
    // The server hears of the reset as it writes: wait for its line.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (logged.stream().noneMatch(r -> String.valueOf(r.getMessage()).contains("reset"))
        && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(logged).as("records with a stack trace")
        .noneMatch(r -> r.getThrown() != null);
    List<String> lines = logged.stream().filter(r -> r.getLevel().intValue()
        >= java.util.logging.Level.INFO.intValue()).map(LogRecord::getMessage).toList();
    // One line at most: whether the reset lands mid-write depends on timing (on a loaded
    // machine the response may be written whole before the client gives up on it).
    assertThat(lines).filteredOn(l -> l.startsWith("client_reset_mid_write "))
        .hasSizeLessThanOrEqualTo(1);
    assertThat(lines).as("besides the stream's own open and close lines")
        .allMatch(l -> l.startsWith("client_reset_mid_write ") || l.startsWith("stream_"))
        .noneMatch(l -> l.contains("\n"));
  }

  /** Everything a watcher hears. */
  private static final class Events implements ResourceWatcher {
    final List<ResourceUpdate> updates = new CopyOnWriteArrayList<>();
    final LinkedBlockingQueue<XdsError> errors = new LinkedBlockingQueue<>();
    final LinkedBlockingQueue<String> processed = new LinkedBlockingQueue<>();

    @Override
    public void onChanged(ResourceUpdate u) {
      updates.add(u);
    }

    @Override
    public void onDoesNotExist(ResourceType t, String name) {}

    @Override
    public void onError(XdsError e) {
      errors.add(e);
    }

    @Override
    public void onResponseProcessed(ResourceType t, String version, boolean nacked) {
      processed.add(version);
    }
  }
}
