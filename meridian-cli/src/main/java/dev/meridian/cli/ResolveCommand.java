package dev.meridian.cli;

import dev.meridian.client.Bootstrap;
import dev.meridian.client.RoutingTable;
import dev.meridian.client.TlsConfig;
import dev.meridian.client.XdsClient;
import dev.meridian.client.XdsError;
import dev.meridian.client.XdsResolver;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code meridian resolve}: route one call the way a proxyless gRPC client would. */
@Command(name = "resolve", mixinStandardHelpOptions = true,
    description = "Resolve a call through LDS, RDS, CDS and EDS and print the virtual host, route, "
        + "clusters (with weights) and endpoints chosen.",
    exitCodeListHeading = "Exit status:%n",
    exitCodeList = {
        "0:the call was routed",
        "1:the call cannot be routed (the problem is printed)",
        "2:usage error",
        "3:a response exceeds --max-response-bytes"})
final class ResolveCommand implements Callable<Integer> {
  @Option(names = "--server", defaultValue = ClientOptions.SERVER_DEFAULT, paramLabel = "HOST:PORT",
      converter = HostPort.Converter.class, description = ClientOptions.SERVER_HELP)
  HostPort server;

  @Option(names = "--listener", required = true, paramLabel = "NAME",
      description = "The listener (for gRPC: the target's name).")
  String listener;

  @Option(names = "--path", required = true, paramLabel = "/pkg.Service/Method",
      description = "The call's path.")
  String path;

  @Option(names = "--header", paramLabel = "K=V", description = "A request header (repeatable).")
  List<String> headers = new ArrayList<>();

  @Option(names = "--authority", paramLabel = "HOST",
      description = "The :authority matched against virtual host domains (default: the listener name).")
  String authority;

  @Option(names = "--delta", description = "Use incremental (Delta) xDS.")
  boolean delta;

  @Option(names = "--node-id", defaultValue = "meridian-cli", paramLabel = "ID",
      description = "node.id sent to the server (default ${DEFAULT-VALUE}).")
  String nodeId;

  @Option(names = "--node-cluster", defaultValue = "", paramLabel = "C",
      description = "node.cluster sent to the server.")
  String nodeCluster;

  @Option(names = "--timeout", defaultValue = "10s", paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "How long to wait for the whole chain (default ${DEFAULT-VALUE}).")
  Duration timeout;

  @Option(names = {"-o", "--output"}, defaultValue = "yaml", paramLabel = "FORMAT",
      converter = Choice.Outputs.class, completionCandidates = Choice.Outputs.class,
      description = "Output format: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
  ResourcePrinter.Format output;

  @Option(names = "--log-level", defaultValue = "warn", paramLabel = "LEVEL",
      converter = Choice.LogLevels.class, completionCandidates = Choice.LogLevels.class,
      description = "Level of Meridian's own log lines on stderr: ${COMPLETION-CANDIDATES}; "
          + "debug also shows the gRPC library's own warnings (default ${DEFAULT-VALUE}).")
  Logging.Level logLevel;

  @Option(names = "--max-response-bytes", defaultValue = ClientOptions.MAX_RESPONSE_DEFAULT,
      paramLabel = "BYTES", converter = ByteSize.class,
      description = ClientOptions.MAX_RESPONSE_HELP)
  int maxResponseBytes;

  @Mixin
  TlsOptions tls;

  private final PrintStream out;
  private final PrintStream err;

  ResolveCommand() {
    this(System.out, System.err);
  }

  ResolveCommand(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  @Override
  public Integer call() {
    Logging.configureClient(logLevel);
    TlsConfig tlsConfig = tls.checkedConfig();
    Map<String, String> hdrs = new LinkedHashMap<>();
    for (String h : headers) {
      int eq = h.indexOf('=');
      if (eq <= 0) {
        err.println("meridian resolve: --header must be K=V, not " + h);
        return 2;
      }
      hdrs.put(h.substring(0, eq).toLowerCase(Locale.ROOT), h.substring(eq + 1));
    }
    ResourcePrinter printer = ResourcePrinter.forFormat(output);
    String auth = authority == null ? listener : authority;
    double pick = ThreadLocalRandom.current().nextDouble();
    Node node = Node.newBuilder().setId(nodeId).setCluster(nodeCluster).build();
    XdsClient.Options o = XdsClient.Options.defaults().withDoesNotExistTimeout(timeout)
        .withProtocol(delta ? XdsClient.Protocol.DELTA : XdsClient.Protocol.SOTW)
        .withMaxResponseBytes(maxResponseBytes);
    RoutingTable.Resolution res;
    try (XdsClient client = XdsClient.create(Bootstrap.forServer(server.toString(), node, tlsConfig),
        o);
        XdsResolver resolver = new XdsResolver(client, listener).start(null)) {
      long deadline = System.nanoTime() + timeout.toNanos() + Duration.ofSeconds(1).toNanos();
      while (true) {
        res = resolver.current().resolve(auth, path, hdrs, () -> pick);
        boolean settled = res.ok() || (res.problem() != null && !res.problem().contains("not yet received"));
        if (settled || System.nanoTime() > deadline) {
          break;
        }
        XdsError failed = resolver.lastXdsError();
        if (failed != null && ClientOptions.tooLarge(failed) != null) {
          err.println("meridian resolve: " + ClientOptions.tooLarge(failed));
          return GetCommand.UNREACHABLE; // waiting cannot help: the same response would come
        }
        LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
      }
      if (!res.ok()) {
        String why = resolver.lastError();
        err.println("meridian resolve: " + res.problem() + (why == null ? "" : " (" + why + ")"));
      }
    }
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("listener", listener);
    doc.put("authority", auth);
    doc.put("path", path);
    if (res.virtualHost() != null) {
      Map<String, Object> vh = new LinkedHashMap<>();
      vh.put("name", res.virtualHost().getName());
      vh.put("domains", res.virtualHost().getDomainsList());
      doc.put("virtual_host", vh);
    }
    if (res.route() != null) {
      doc.put("route", printer.tree(res.route()));
    }
    if (res.clusters() != null) {
      List<Object> cs = new ArrayList<>();
      for (RoutingTable.WeightedChoice c : res.clusters()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", c.name());
        m.put("weight", c.weight());
        m.put("chosen", c.name().equals(res.cluster()));
        cs.add(m);
      }
      doc.put("clusters", cs);
    }
    if (res.clusterResource() != null) {
      Map<String, Object> c = new LinkedHashMap<>();
      c.put("name", res.cluster());
      c.put("type", res.clusterResource().getType().name());
      c.put("eds_service_name", RoutingTable.edsServiceName(res.clusterResource()));
      doc.put("cluster", c);
    }
    if (res.assignment() != null) {
      List<Object> localities = new ArrayList<>();
      for (LocalityLbEndpoints l : res.assignment().getEndpointsList()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("priority", l.getPriority());
        m.put("locality", "region=" + l.getLocality().getRegion() + " zone="
            + l.getLocality().getZone() + " sub_zone=" + l.getLocality().getSubZone());
        m.put("weight", l.hasLoadBalancingWeight() ? l.getLoadBalancingWeight().getValue() : 1);
        List<Object> eps = new ArrayList<>();
        for (LbEndpoint e : l.getLbEndpointsList()) {
          eps.add(address(e.getEndpoint().getAddress().getSocketAddress()) + " weight "
              + (e.hasLoadBalancingWeight() ? e.getLoadBalancingWeight().getValue() : 1) + " "
              + e.getHealthStatus().name().toLowerCase(Locale.ROOT));
        }
        m.put("endpoints", eps);
        localities.add(m);
      }
      doc.put("endpoints", localities);
    }
    if (res.endpoint() != null) {
      doc.put("chosen_endpoint", address(res.endpoint()));
    }
    if (!res.ok()) {
      doc.put("problem", res.problem());
    }
    out.println(printer.document(doc));
    return res.ok() ? 0 : 1;
  }

  private static String address(SocketAddress a) {
    return a.getAddress() + ":" + a.getPortValue();
  }
}
