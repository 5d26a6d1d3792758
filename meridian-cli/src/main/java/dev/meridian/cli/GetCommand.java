package dev.meridian.cli;

import dev.meridian.client.ResourceUpdate;
import dev.meridian.client.ResourceWatcher;
import dev.meridian.client.XdsClient;
import dev.meridian.client.XdsError;
import dev.meridian.internal.protocol.XdstpName;
import dev.meridian.xds.ResourceType;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code meridian get [TYPE] [NAME...]}: fetch once, print, exit. Shaped like kubectl's
 * (issue 24): the type as the first word (or {@code --type}), a table by default, {@code -o
 * wide|name|yaml|json}.
 */
@Command(name = "get", mixinStandardHelpOptions = true,
    description = "Fetch resources once from an xDS server and print them with their versions: "
        + "a table (NAME, VERSION, SUMMARY) unless -o says otherwise.",
    exitCodeListHeading = "Exit status:%n",
    exitCodeList = {
        "0:the resources were printed (none: 'No TYPE.' on stderr)",
        "1:a named resource does not exist",
        "2:usage error",
        "3:the server cannot be reached, does not answer in time, or its response exceeds --max-response-bytes"})
final class GetCommand implements Callable<Integer> {
  static final int NOT_FOUND = 1;
  static final int UNREACHABLE = 3;

  /** {@code -o}: the default {@code table}, kubectl's {@code wide} and {@code name}, or a document. */
  enum Output { TABLE, WIDE, NAME, YAML, JSON }

  @Spec
  CommandSpec spec;

  @Mixin
  ClientOptions opts;

  @Parameters(paramLabel = "[TYPE] [NAME...]", hideParamSyntax = true, arity = "0..*",
      completionCandidates = TypeWords.class,
      description = "The resource type (clusters, cluster, cds, ...: what --type takes) and then "
          + "resource names, as --name.")
  List<String> words = new ArrayList<>();

  @Option(names = "--type", paramLabel = "TYPE", converter = ClientOptions.TypeConverter.class,
      description = "The type, instead of the first word: listeners, routes, clusters, endpoints, "
          + "secrets, runtimes, scoped-routes, virtual-hosts, extension-configs, an abbreviation "
          + "(CDS) or a full type URL.")
  ResourceType typeOption;

  @Option(names = {"-o", "--output"}, defaultValue = "table", paramLabel = "FORMAT",
      converter = Choice.GetOutputs.class, completionCandidates = Choice.GetOutputs.class,
      description = "Output format: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
  Output output;

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
    Logging.configureClient(opts.logLevel);
    List<String> names = new ArrayList<>(opts.names);
    ResourceType type = type(names);
    if (!opts.delta && !type.availableInSotw()) {
      err.println("meridian get: " + type.shortName() + " are only served by Delta xDS: add --delta");
      return 2;
    }
    Collector c = new Collector(type, names);
    try (XdsClient client = opts.connect(timeout)) {
      if (names.isEmpty()) {
        client.watchAll(type, c);
      } else {
        client.watch(type, names, c); // one request: absence is known from the answer
      }
      if (!c.done.await(timeout.toMillis() + 2000, TimeUnit.MILLISECONDS)) {
        if (names.isEmpty()) {
          // Meridian answers every wildcard, empty or not; some servers send nothing for a type
          // they have none of, and silence cannot be told from a server that is stuck.
          err.printf("meridian get: %s sent nothing for %s within %s, which may mean it has "
              + "none (some servers do not answer for a type they have none of)%n", opts.server,
              type.shortName(), Durations.format(timeout));
        } else {
          err.printf("meridian get: no answer from %s for %s within %s%n", opts.server,
              type.shortName(), Durations.format(timeout));
        }
        return UNREACHABLE;
      }
    }
    if (c.error != null && ClientOptions.tooLarge(c.error) != null) {
      err.println("meridian get: cannot get " + type.shortName() + ": "
          + ClientOptions.tooLarge(c.error));
      return UNREACHABLE;
    }
    if (c.error != null) {
      // The error names the server, e.g. "connection refused to 127.0.0.1:1".
      err.println("meridian get: cannot get " + type.shortName() + ": "
          + opts.tls.explain(c.error.message()));
      return UNREACHABLE;
    }
    print(type, c);
    if (!c.missing.isEmpty()) {
      for (String n : c.missing) {
        err.printf("meridian get: %s %s does not exist%n", type.shortName(), n);
      }
      return NOT_FOUND;
    }
    return 0;
  }

  /**
   * The type: the first word if it names one ({@code clusters}, {@code cluster}, {@code cds}, a
   * type URL), else {@code --type}; the other words are names (added to {@code names}). Both, and
   * different, or neither: a usage error.
   */
  private ResourceType type(List<String> names) {
    List<String> rest = new ArrayList<>(words);
    ResourceType type = typeOption;
    if (!rest.isEmpty()) {
      Optional<ResourceType> first = ResourceType.parse(rest.get(0));
      if (first.isPresent()) {
        if (typeOption != null && first.get() != typeOption) {
          throw new ParameterException(spec.commandLine(), "the type is given twice: '"
              + rest.get(0) + "' and --type " + typeOption.shortName());
        }
        type = first.get();
        rest.remove(0);
      } else if (typeOption == null) {
        throw new ParameterException(spec.commandLine(), "unknown type '" + rest.get(0)
            + "'; use one of listeners, routes, clusters, endpoints, secrets, runtimes, "
            + "scoped-routes, virtual-hosts, extension-configs or a type URL");
      }
    }
    if (type == null) {
      throw new ParameterException(spec.commandLine(), "which resources? Name a type: "
          + "'meridian get clusters [NAME...]' (or --type)");
    }
    for (String n : rest) {
      if (!names.contains(n)) {
        names.add(n);
      }
    }
    // gRFC A47: an xdstp name is sent, answered and printed in its canonical form (context
    // parameters sorted), so the answer is matched to what was asked whatever its spelling.
    names.replaceAll(XdstpName::canonicalize);
    List<String> distinct = new ArrayList<>(new LinkedHashSet<>(names));
    names.clear();
    names.addAll(distinct);
    return type;
  }

  private void print(ResourceType type, Collector c) {
    switch (output) {
      case TABLE, WIDE, NAME -> {
        if (c.found.isEmpty()) {
          if (c.missing.isEmpty()) {
            err.println("No " + type.shortName() + ".");
          }
          return;
        }
        List<ResourceUpdate> rows = new ArrayList<>(c.found.values());
        rows.sort(java.util.Comparator.comparing(ResourceUpdate::name)); // as kubectl: by name
        out.println(output == Output.NAME ? ResourceTable.names(rows)
            : ResourceTable.render(rows, output == Output.WIDE));
      }
      case YAML, JSON -> {
        // The document `get` printed before issue 24 (then its only output, YAML by default).
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("type", type.typeUrl());
        doc.put("version", c.version);
        List<Object> resources = new ArrayList<>();
        for (ResourceUpdate u : c.found.values()) {
          resources.add(ResourcePrinter.entry(u));
        }
        doc.put("resources", resources);
        ResourcePrinter printer = ResourcePrinter.forFormat(
            output == Output.JSON ? ResourcePrinter.Format.JSON : ResourcePrinter.Format.YAML);
        out.println(printer.document(doc));
      }
      default -> throw new IllegalStateException(output.toString());
    }
  }

  /** Completion for the first word: the types' short names. */
  static final class TypeWords implements Iterable<String> {
    @Override
    public Iterator<String> iterator() {
      return ResourceType.all().stream().map(ResourceType::shortName).iterator();
    }
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
      // done once the response is processed (onResponseProcessed): its version is known then
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
      if (e.kind() == XdsError.Kind.RESPONSE_TOO_LARGE) {
        error = e; // retrying cannot help: the same response would come again
        done.countDown();
      } else if (e.kind() == XdsError.Kind.UNAVAILABLE && found.isEmpty() && missing.isEmpty()) {
        error = e;
        done.countDown();
      }
    }

    @Override
    public void onResponseProcessed(ResourceType t, String acceptedVersion, boolean nacked) {
      version = acceptedVersion;
      if (wildcard || pending.isEmpty()) {
        done.countDown();
      }
    }
  }
}
