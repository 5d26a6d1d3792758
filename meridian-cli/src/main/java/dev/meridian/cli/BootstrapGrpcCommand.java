package dev.meridian.cli;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import dev.meridian.client.TlsConfig;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code meridian bootstrap grpc}: the xDS bootstrap of a proxyless gRPC client (gRFC A27), its
 * channel creds {@code insecure}, or with {@code --tls-*} gRFC A65 {@code tls} naming the files
 * (issue 20). The files are named, not read: the client reads them, wherever it runs.
 */
@Command(name = "grpc", mixinStandardHelpOptions = true,
    description = "Print an xDS bootstrap (JSON, gRFC A27) for proxyless gRPC clients: set "
        + "GRPC_XDS_BOOTSTRAP to its file. With --tls-* its channel creds are gRFC A65 tls.")
final class BootstrapGrpcCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = "--server", required = true, paramLabel = "HOST:PORT",
      converter = HostPort.Converter.class,
      description = "Meridian's xDS (gRPC) address, e.g. 127.0.0.1:18000; with TLS, a name or IP "
          + "address its certificate holds.")
  HostPort server;

  @Option(names = "--node-id", required = true, paramLabel = "ID",
      description = "The client's node.id; it selects the config group.")
  String nodeId;

  @Option(names = "--node-cluster", paramLabel = "C", description = "The client's node.cluster.")
  String nodeCluster;

  @Mixin
  TlsOptions tls;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    out.print(render());
    out.flush();
    return 0;
  }

  String render() {
    JsonObject creds = new JsonObject();
    TlsConfig t = tls.absoluteConfig();
    if (t == null) {
      creds.addProperty("type", "insecure");
    } else {
      // gRFC A65; no insecure fallback after it: a client without tls support must fail, not
      // fall back to plaintext.
      creds.addProperty("type", "tls");
      JsonObject config = new JsonObject();
      for (TlsConfig.Role role : TlsConfig.Role.values()) {
        if (t.file(role) != null) {
          config.addProperty(role.field(), t.file(role).toString());
        }
      }
      creds.add("config", config);
    }
    JsonArray channelCreds = new JsonArray();
    channelCreds.add(creds);
    JsonArray features = new JsonArray();
    features.add("xds_v3");
    JsonObject xdsServer = new JsonObject();
    xdsServer.addProperty("server_uri", server.toString());
    xdsServer.add("channel_creds", channelCreds);
    xdsServer.add("server_features", features);
    JsonArray servers = new JsonArray();
    servers.add(xdsServer);
    JsonObject node = new JsonObject();
    node.addProperty("id", nodeId);
    if (nodeCluster != null) {
      node.addProperty("cluster", nodeCluster);
    }
    JsonObject root = new JsonObject();
    root.add("xds_servers", servers);
    root.add("node", node);
    return new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create().toJson(root) + "\n";
  }
}
