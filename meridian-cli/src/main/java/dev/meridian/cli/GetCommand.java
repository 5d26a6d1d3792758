package dev.meridian.cli;

import dev.meridian.client.ResourceUpdate;
import dev.meridian.client.ResourceWatcher;
import dev.meridian.client.XdsClient;
import dev.meridian.client.XdsError;
import dev.meridian.xds.ResourceType;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code meridian get}: fetch once, print, exit. */
@Command(name = "get", mixinStandardHelpOptions = true,
    description = "Fetch resources once from an xDS server and print them with their versions.")
final class GetCommand implements Callable<Integer> {
  static final int NOT_FOUND = 1;
  static final int UNREACHABLE = 3;

  @Mixin
  ClientOptions opts;

  @Option(names = "--timeout", defaultValue = "10s", paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "How long to wait for the server, and for a named resource before it counts "
          + "as not existing (default ${DEFAULT-VALUE}).")
  Duration timeout;

  private final PrintStream out;
  private final PrintStream err;

  GetCommand() {
    this(System.out, System.err);
  }

  GetCommand(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  @Override
  public Integer call() throws Exception {
    Logging.configure(opts.logLevel);
    ResourceType type = opts.type;
    if (!opts.delta && !type.availableInSotw()) {
      err.println("meridian get: " + type.shortName() + " are only served by Delta xDS: add --delta");
      return 2;
    }
    ResourcePrinter printer = opts.printer();
    Collector c = new Collector(type, opts.names);
    try (XdsClient client = opts.connect(timeout)) {
      if (opts.names.isEmpty()) {
        client.watchAll(type, c);
      } else {
        client.watch(type, opts.names, c); // one request: absence is known from the answer
      }
      if (!c.done.await(timeout.toMillis() + 2000, TimeUnit.MILLISECONDS)) {
        err.printf("meridian get: no answer from %s for %s within %s%n", opts.server,
            type.shortName(), Durations.format(timeout));
        return UNREACHABLE;
      }
    }
    if (c.error != null) {
      // The error names the server, e.g. "connection refused to 127.0.0.1:1".
      err.println("meridian get: cannot get " + type.shortName() + ": "
          + opts.tls.explain(c.error.message()));
      return UNREACHABLE;
    }
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("type", type.typeUrl());
    doc.put("version", c.version);
    List<Object> resources = new ArrayList<>();
    for (ResourceUpdate u : c.found.values()) {
      resources.add(ResourcePrinter.entry(u));
    }
    doc.put("resources", resources);
    out.println(printer.document(doc));
    if (!c.missing.isEmpty()) {
      for (String n : c.missing) {
        err.printf("meridian get: %s %s does not exist%n", type.shortName(), n);
      }
      return NOT_FOUND;
    }
    return 0;
  }

  /** Waits for every named resource (or, for a wildcard, the first response). */
  private static final class Collector implements ResourceWatcher {
    final ResourceType type;
    final Set<String> pending;
    final boolean wildcard;
    final Map<String, ResourceUpdate> found = new LinkedHashMap<>();
    final Set<String> missing = new LinkedHashSet<>();
    final CountDownLatch done = new CountDownLatch(1);
    String version = "";
    XdsError error;

    Collector(ResourceType type, List<String> names) {
      this.type = type;
      this.pending = new LinkedHashSet<>(names);
      this.wildcard = names.isEmpty();
    }

    @Override
    public void onChanged(ResourceUpdate update) {
      found.put(update.name(), update);
      pending.remove(update.name());
      if (!wildcard && pending.isEmpty()) {
        done.countDown();
      }
    }

    @Override
    public void onDoesNotExist(ResourceType t, String name) {
      found.remove(name);
      if (pending.remove(name)) {
        missing.add(name);
      }
      if (!wildcard && pending.isEmpty()) {
        done.countDown();
      }
    }

    @Override
    public void onError(XdsError e) {
      if (e.kind() == XdsError.Kind.UNAVAILABLE && found.isEmpty() && missing.isEmpty()) {
        error = e;
        done.countDown();
      }
    }

    @Override
    public void onResponseProcessed(ResourceType t, String acceptedVersion, boolean nacked) {
      version = acceptedVersion;
      if (wildcard) {
        done.countDown();
      }
    }
  }
}
