package dev.meridian.cli;

import dev.meridian.client.Bootstrap;
import dev.meridian.client.XdsClient;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The flags {@code get} and {@code watch} share (issue 6; TLS: issue 20). Each has its own
 * {@code --type} and {@code -o}: {@code get} also takes the type as a positional word and prints
 * tables (issue 24).
 */
final class ClientOptions {
  /** {@code --server}'s default: {@code $MERIDIAN_SERVER}, else this (issue 24). */
  static final String DEFAULT_SERVER = "127.0.0.1:18000";
  static final String SERVER_DEFAULT = "${env:MERIDIAN_SERVER:-" + DEFAULT_SERVER + "}";
  static final String SERVER_HELP = "The control plane's xDS gRPC address (default "
      + "$MERIDIAN_SERVER, else " + DEFAULT_SERVER + "; now ${DEFAULT-VALUE}).";

  @Option(names = "--server", defaultValue = SERVER_DEFAULT, paramLabel = "HOST:PORT",
      converter = HostPort.Converter.class, description = SERVER_HELP)
  HostPort server;

  @Option(names = "--name", paramLabel = "N",
      description = "A resource name (repeatable); none: every resource of the type (wildcard).")
  List<String> names = new ArrayList<>();

  @Option(names = "--delta", description = "Use incremental (Delta) xDS instead of State of the World.")
  boolean delta;

  @Option(names = "--per-type", description = "Use the per-type service instead of ADS.")
  boolean perType;

  @Option(names = "--node-id", defaultValue = "meridian-cli", paramLabel = "ID",
      description = "node.id sent to the server (default ${DEFAULT-VALUE}).")
  String nodeId;

  @Option(names = "--node-cluster", defaultValue = "", paramLabel = "C",
      description = "node.cluster sent to the server.")
  String nodeCluster;

  @Option(names = "--log-level", defaultValue = "warn", paramLabel = "LEVEL",
      converter = Choice.LogLevels.class, completionCandidates = Choice.LogLevels.class,
      description = "Level of Meridian's own log lines on stderr: ${COMPLETION-CANDIDATES}; "
          + "debug also shows the gRPC library's own warnings (default ${DEFAULT-VALUE}).")
  Logging.Level logLevel;

  @Option(names = "--max-response-bytes", defaultValue = MAX_RESPONSE_DEFAULT, paramLabel = "BYTES",
      converter = ByteSize.class, description = MAX_RESPONSE_HELP)
  int maxResponseBytes;

  @Mixin
  TlsOptions tls;

  /** The client library's default, spelled as a user would. */
  static final String MAX_RESPONSE_DEFAULT = "256MiB";
  static final String MAX_RESPONSE_HELP = "Largest xDS response read, in bytes or with KiB, MiB "
      + "or GiB (default ${DEFAULT-VALUE}); a larger one is an error naming its size.";

  /** An unknown type is a usage error, like any other bad value. */
  static final class TypeConverter implements CommandLine.ITypeConverter<ResourceType> {
    @Override
    public ResourceType convert(String value) {
      return ResourceType.parse(value).orElseThrow(() -> new CommandLine.TypeConversionException(
          "unknown type '" + value + "'; use one of listeners, routes, clusters, endpoints, "
              + "secrets, runtimes, scoped-routes, virtual-hosts, extension-configs or a type URL"));
    }
  }

  /**
   * One line for an error the command cannot go on after, or null: a response over the limit
   * names the flag that raises it.
   */
  static String tooLarge(dev.meridian.client.XdsError e) {
    return e.kind() == dev.meridian.client.XdsError.Kind.RESPONSE_TOO_LARGE
        ? e.message() + ": raise --max-response-bytes" : null;
  }

  XdsClient connect(Duration doesNotExistTimeout) {
    Node node = Node.newBuilder().setId(nodeId).setCluster(nodeCluster).build();
    XdsClient.Options o = XdsClient.Options.defaults()
        .withProtocol(delta ? XdsClient.Protocol.DELTA : XdsClient.Protocol.SOTW)
        .withMode(perType ? XdsClient.Mode.PER_TYPE : XdsClient.Mode.ADS)
        .withDoesNotExistTimeout(doesNotExistTimeout)
        .withMaxResponseBytes(maxResponseBytes);
    return XdsClient.create(Bootstrap.forServer(server.toString(), node, tls.checkedConfig()), o);
  }
}
