package dev.meridian.cli;

import dev.meridian.client.ConnectFailure;
import dev.meridian.client.ReloadingTlsCredentials;
import io.envoyproxy.envoy.service.status.v3.ClientConfig;
import io.envoyproxy.envoy.service.status.v3.ClientStatusDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.status.v3.ClientStatusRequest;
import io.envoyproxy.envoy.service.status.v3.ClientStatusResponse;
import io.envoyproxy.envoy.type.matcher.v3.NodeMatcher;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code meridian status}: asks a control plane's CSDS (envoy.service.status.v3, on its xDS port)
 * what each connected client runs, and prints one row per (node, type, resource). Works against any
 * server-side CSDS, not only Meridian.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
    description = "Show what each connected client was sent, ACKed or NACKed (via CSDS).",
    exitCodeListHeading = "Exit status:%n",
    exitCodeList = {
        "0:the status was printed",
        "2:usage error",
        "3:the server cannot be reached, fails the query, or its response exceeds --max-response-bytes"})
final class StatusCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  /** grpc-java's words for a response over the channel's maxInboundMessageSize. */
  private static final java.util.regex.Pattern TOO_LARGE =
      java.util.regex.Pattern.compile("gRPC message exceeds maximum size (\\d+): (\\d+)");

  @Option(names = "--server", defaultValue = ClientOptions.SERVER_DEFAULT, paramLabel = "HOST:PORT",
      converter = HostPort.Converter.class, description = ClientOptions.SERVER_HELP)
  HostPort server;

  @Option(names = "--node-id", paramLabel = "ID", description = "Only this node (exact id).")
  String nodeId;

  @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10s",
      converter = DurationConverter.class, description = "Deadline of the query (default ${DEFAULT-VALUE}).")
  Duration timeout;

  @Option(names = "--max-response-bytes", defaultValue = ClientOptions.MAX_RESPONSE_DEFAULT,
      paramLabel = "BYTES", converter = ByteSize.class,
      description = ClientOptions.MAX_RESPONSE_HELP)
  int maxResponseBytes;

  @Option(names = "--log-level", defaultValue = "warn", paramLabel = "LEVEL",
      converter = Choice.LogLevels.class, completionCandidates = Choice.LogLevels.class,
      description = "Level of log lines on stderr: ${COMPLETION-CANDIDATES}; debug also shows "
          + "the gRPC library's own warnings (default ${DEFAULT-VALUE}).")
  Logging.Level logLevel;

  @Mixin
  TlsOptions tls;

  @Override
  public Integer call() {
    Logging.configureClient(logLevel);
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    ReloadingTlsCredentials creds = tls.open();
    ManagedChannel channel = Grpc.newChannelBuilderForAddress(server.host(), server.port(),
        creds == null ? InsecureChannelCredentials.create() : creds.channelCredentials())
        .maxInboundMessageSize(maxResponseBytes).build();
    try {
      ClientStatusRequest.Builder req = ClientStatusRequest.newBuilder();
      if (nodeId != null) {
        req.addNodeMatchers(NodeMatcher.newBuilder()
            .setNodeId(StringMatcher.newBuilder().setExact(nodeId)));
      }
      ClientStatusResponse r = ClientStatusDiscoveryServiceGrpc.newBlockingStub(channel)
          .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
          .fetchClientStatus(req.build());
      if (r.getConfigCount() == 0) {
        out.println(nodeId == null ? "no clients connected" : "no client with node id '" + nodeId + "'");
      } else {
        out.print(table(r));
      }
      out.flush();
      return 0;
    } catch (StatusRuntimeException e) {
      java.util.regex.Matcher big = TOO_LARGE.matcher(
          String.valueOf(e.getStatus().getDescription()));
      if (e.getStatus().getCode() == io.grpc.Status.Code.RESOURCE_EXHAUSTED && big.find()
          && Long.parseLong(big.group(1)) == maxResponseBytes) {
        err.println("meridian status: a response of " + big.group(2) + " bytes from " + server
            + " exceeds the client's limit of " + maxResponseBytes
            + " bytes (max response bytes): raise --max-response-bytes");
        return 3;
      }
      String failed = ConnectFailure.describe(e.getStatus(), server.toString());
      err.println("meridian status: " + tls.explain(failed != null ? failed : server + ": "
          + e.getStatus().getCode() + (e.getStatus().getDescription() == null ? ""
              : ": " + e.getStatus().getDescription())));
      return 3;
    } finally {
      channel.shutdownNow();
      if (creds != null) {
        creds.close();
      }
    }
  }

  static final String[] HEADER = {"NODE", "CLUSTER", "TYPE", "NAME", "STATUS", "SERVER", "VERSION",
      "ERROR"};

  /** One row per resource, columns padded to their widest cell. */
  static String table(ClientStatusResponse r) {
    List<String[]> rows = new ArrayList<>();
    rows.add(HEADER);
    for (ClientConfig c : r.getConfigList()) {
      for (ClientConfig.GenericXdsConfig g : c.getGenericXdsConfigsList()) {
        // CDS, EDS, ... for the types Meridian knows; the message name for any other server's.
        String type = dev.meridian.xds.ResourceType.fromTypeUrl(g.getTypeUrl())
            .map(dev.meridian.xds.ResourceType::abbreviation)
            .orElse(g.getTypeUrl().substring(g.getTypeUrl().lastIndexOf('.') + 1));
        String error = g.hasErrorState() ? g.getErrorState().getDetails().replace('\n', ' ') : "";
        rows.add(new String[] {c.getNode().getId(), dash(c.getNode().getCluster()), type,
            g.getName(), g.getClientStatus().name(), g.getConfigStatus().name(),
            dash(g.getVersionInfo()), error});
      }
      if (c.getGenericXdsConfigsCount() == 0) {
        rows.add(new String[] {c.getNode().getId(), dash(c.getNode().getCluster()), "-", "-", "-",
            "-", "-", ""});
      }
    }
    int[] width = new int[HEADER.length];
    for (String[] row : rows) {
      for (int i = 0; i < row.length; i++) {
        width[i] = Math.max(width[i], row[i].length());
      }
    }
    StringBuilder sb = new StringBuilder();
    for (String[] row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < row.length; i++) {
        line.append(i == row.length - 1 ? row[i] : String.format("%-" + width[i] + "s  ", row[i]));
      }
      sb.append(line.toString().stripTrailing()).append('\n');
    }
    return sb.toString();
  }

  private static String dash(String s) {
    return s.isEmpty() ? "-" : s;
  }
}
