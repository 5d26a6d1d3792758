package dev.meridian.cli;

import dev.meridian.client.ResourceUpdate;
import dev.meridian.client.ResourceWatcher;
import dev.meridian.client.XdsClient;
import dev.meridian.client.XdsError;
import dev.meridian.xds.ResourceType;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code meridian watch}: print every update as it arrives (the client ACKs it) until Ctrl-C.
 * With {@code -o json}, one JSON object per line: {@code event} is {@code update} (a response was
 * processed: version, changed resources), {@code does-not-exist} or {@code error}.
 */
@Command(name = "watch", mixinStandardHelpOptions = true,
    description = "Watch resources on an xDS server and print every update until Ctrl-C.",
    exitCodeListHeading = "Exit status:%n",
    exitCodeList = {
        "0:ended by Ctrl-C",
        "2:usage error",
        "3:a response exceeds --max-response-bytes (the same response would come again)"})
final class WatchCommand implements Callable<Integer> {
  @Mixin
  ClientOptions opts;

  @Option(names = "--type", required = true, paramLabel = "TYPE",
      converter = ClientOptions.TypeConverter.class,
      description = "listeners, routes, clusters, endpoints, secrets, runtimes, scoped-routes, "
          + "virtual-hosts, extension-configs, an abbreviation (CDS) or a full type URL.")
  ResourceType type;

  @Option(names = {"-o", "--output"}, defaultValue = "yaml", paramLabel = "FORMAT",
      converter = Choice.Outputs.class, completionCandidates = Choice.Outputs.class,
      description = "Output format: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
  ResourcePrinter.Format output;

  private final PrintStream out;
  private final PrintStream err;
  /** Counted down to stop (Ctrl-C, or tests). */
  final CountDownLatch stop = new CountDownLatch(1);
  /** The exit status: 0 unless an error ended the watch. */
  private final java.util.concurrent.atomic.AtomicInteger exit =
      new java.util.concurrent.atomic.AtomicInteger();

  WatchCommand() {
    this(System.out, System.err);
  }

  WatchCommand(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  @Override
  public Integer call() throws Exception {
    Logging.configureClient(opts.logLevel);
    ResourceType type = this.type;
    if (!opts.delta && !type.availableInSotw()) {
      err.println("meridian watch: " + type.shortName() + " are only served by Delta xDS: add --delta");
      return 2;
    }
    ResourcePrinter printer = ResourcePrinter.forFormat(output);
    XdsClient client = opts.connect(Duration.ofSeconds(15));
    CountDownLatch closed = new CountDownLatch(1);
    Thread hook = new Thread(() -> {
      stop.countDown();
      try {
        closed.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "meridian-watch-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      Printer p = new Printer(type, printer);
      if (opts.names.isEmpty()) {
        client.watchAll(type, p);
      } else {
        client.watch(type, opts.names, p); // one request: absence is known from the answer
      }
      stop.await();
    } finally {
      client.close();
      out.flush();
      closed.countDown();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // already shutting down (Ctrl-C): the hook is running and now returns
      }
    }
    return exit.get();
  }

  private final class Printer implements ResourceWatcher {
    final ResourceType type;
    final ResourcePrinter printer;
    final List<ResourceUpdate> changed = new ArrayList<>();

    Printer(ResourceType type, ResourcePrinter printer) {
      this.type = type;
      this.printer = printer;
    }

    private Map<String, Object> event(String kind) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("event", kind);
      m.put("time", Instant.now().toString());
      m.put("type", type.typeUrl());
      return m;
    }

    private void emit(Map<String, Object> m) {
      synchronized (out) {
        out.println(printer.event(m));
        out.flush();
      }
    }

    @Override
    public void onChanged(ResourceUpdate update) {
      changed.add(update);
    }

    @Override
    public void onDoesNotExist(ResourceType t, String name) {
      Map<String, Object> m = event("does-not-exist");
      m.put("name", name);
      emit(m);
    }

    @Override
    public void onError(XdsError error) {
      String fatal = ClientOptions.tooLarge(error);
      if (fatal != null) {
        // The same response would come at every reconnect: end with one line, not a loop.
        if (exit.compareAndSet(0, GetCommand.UNREACHABLE)) {
          err.println("meridian watch: " + fatal);
        }
        stop.countDown();
        return;
      }
      Map<String, Object> m = event("error");
      m.put("kind", error.kind().name());
      if (error.resourceName() != null) {
        m.put("name", error.resourceName());
      }
      m.put("message", error.message());
      emit(m);
    }

    @Override
    public void onResponseProcessed(ResourceType t, String version, boolean nacked) {
      Map<String, Object> m = event("update");
      m.put("version", version);
      m.put("nacked", nacked);
      List<Object> c = new ArrayList<>();
      for (ResourceUpdate u : changed) {
        c.add(ResourcePrinter.entry(u));
      }
      changed.clear();
      m.put("changed", c);
      emit(m);
    }
  }
}
