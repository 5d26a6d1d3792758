package dev.meridian.cli;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.protobuf.util.JsonFormat;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.xds.ResourceType;
import dev.meridian.client.TlsConfig;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.server.FilePublisher;
import io.envoyproxy.envoy.config.bootstrap.v3.Admin;
import io.envoyproxy.envoy.config.bootstrap.v3.Bootstrap;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.DataSource;
import io.envoyproxy.envoy.config.core.v3.GrpcService;
import io.envoyproxy.envoy.config.core.v3.Http2ProtocolOptions;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.core.v3.PathConfigSource;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.core.v3.TransportSocket;
import io.envoyproxy.envoy.config.core.v3.WatchedDirectory;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CommonTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.SubjectAltNameMatcher;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsCertificate;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code meridian bootstrap envoy}: an Envoy bootstrap that connects to this Meridian;
 * {@code meridian bootstrap grpc}: a gRFC A27 bootstrap for proxyless gRPC clients.
 */
@Command(name = "bootstrap", mixinStandardHelpOptions = true,
    description = "Print a client bootstrap that connects to Meridian.",
    subcommands = {BootstrapCommand.Envoy.class, BootstrapGrpcCommand.class})
final class BootstrapCommand {

  /** How Envoy talks to Meridian (docs/envoy-modes.md). */
  enum Mode {
    ADS, DELTA_ADS, XDS, DELTA_XDS, REST, FILES
  }

  static final String XDS_CLUSTER = "meridian_xds";
  static final String HTTP_CLUSTER = "meridian_http";

  @Command(name = "envoy", mixinStandardHelpOptions = true,
      description = "Print an Envoy bootstrap (YAML) that gets its listeners and clusters from "
          + "Meridian; with --tls-* it connects over TLS (mTLS with --tls-cert).")
  static final class Envoy implements Callable<Integer> {
    @Option(names = "--mode", required = true, paramLabel = "MODE",
        converter = Choice.Modes.class, completionCandidates = Choice.Modes.class,
        description = "ads, delta-ads, xds (per-type gRPC), delta-xds, rest (REST-JSON polling) or files (--publish-dir).")
    Mode mode;

    @Option(names = "--server", paramLabel = "HOST:PORT", converter = HostPort.Converter.class,
        description = "Meridian's address: the xDS port for gRPC modes (default 127.0.0.1:18000), the REST port for rest (serve --rest-port; default 127.0.0.1:18002).")
    HostPort server;

    @Option(names = "--xds-server", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:18000",
        converter = HostPort.Converter.class,
        description = "rest mode: the xDS port, for resources that reference others with 'ads: {}' (default ${DEFAULT-VALUE}).")
    HostPort xdsServer;

    @Option(names = "--node-id", defaultValue = "envoy", paramLabel = "ID",
        description = "Node id (default ${DEFAULT-VALUE}); it selects the config group.")
    String nodeId;

    @Option(names = "--node-cluster", defaultValue = "meridian", paramLabel = "C",
        description = "Node cluster (default ${DEFAULT-VALUE}).")
    String nodeCluster;

    @Option(names = "--publish-dir", paramLabel = "DIR", description = "files mode: the directory 'meridian serve --publish-dir' writes.")
    Path publishDir;

    @Option(names = "--publish-format", defaultValue = "yaml", paramLabel = "FORMAT",
        converter = Choice.PublishFormats.class, completionCandidates = Choice.PublishFormats.class,
        description = "files mode: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
    FilePublisher.Format publishFormat;

    @Option(names = "--group", defaultValue = ServedConfig.DEFAULT_GROUP, paramLabel = "GROUP",
        description = "files mode: the config group to read (default ${DEFAULT-VALUE}).")
    String group;

    /** Envoy's connections to Meridian over TLS: the files are named, not read, here. */
    @Mixin
    TlsOptions tls;

    @Override
    public Integer call() {
      try {
        System.out.print(render(this));
        return 0;
      } catch (IllegalArgumentException e) {
        System.err.println("meridian: " + e.getMessage());
        return 2;
      }
    }
  }

  static String render(Envoy o) {
    Mode mode = o.mode;
    TlsConfig tls = o.tls.absoluteConfig();
    if (tls != null && tls.caCertificateFile() == null) {
      // Envoy verifies an upstream's certificate only against a CA it is given.
      throw o.tls.usage("--tls-ca is required with --tls-cert: Envoy checks the server's "
          + "certificate only against the CA it is given");
    }
    if (tls != null && mode == Mode.FILES) {
      throw o.tls.usage("--mode files reads local files: it has no connection for --tls-*");
    }
    Bootstrap.Builder b = Bootstrap.newBuilder()
        .setNode(Node.newBuilder().setId(o.nodeId).setCluster(o.nodeCluster))
        .setAdmin(Admin.newBuilder().setAddress(address("127.0.0.1", 9901)));
    var dyn = b.getDynamicResourcesBuilder();
    switch (mode) {
      case ADS, DELTA_ADS -> {
        b.getStaticResourcesBuilder().addClusters(cluster(XDS_CLUSTER, server(o, 18000), true, tls));
        dyn.setAdsConfig(grpc(mode == Mode.DELTA_ADS ? ApiConfigSource.ApiType.DELTA_GRPC
            : ApiConfigSource.ApiType.GRPC));
        ConfigSource ads = ConfigSource.newBuilder().setAds(AggregatedConfigSource.getDefaultInstance())
            .setResourceApiVersion(ApiVersion.V3).build();
        dyn.setCdsConfig(ads).setLdsConfig(ads);
      }
      case XDS, DELTA_XDS -> {
        b.getStaticResourcesBuilder().addClusters(cluster(XDS_CLUSTER, server(o, 18000), true, tls));
        ApiConfigSource.ApiType type = mode == Mode.DELTA_XDS ? ApiConfigSource.ApiType.DELTA_GRPC
            : ApiConfigSource.ApiType.GRPC;
        ConfigSource perType = ConfigSource.newBuilder().setApiConfigSource(grpc(type))
            .setResourceApiVersion(ApiVersion.V3).build();
        dyn.setCdsConfig(perType).setLdsConfig(perType);
        // Resources that say `ads: {}` for their routes and endpoints still resolve.
        dyn.setAdsConfig(grpc(type));
      }
      case REST -> {
        b.getStaticResourcesBuilder()
            .addClusters(cluster(HTTP_CLUSTER, server(o, 18002), false, tls))
            .addClusters(cluster(XDS_CLUSTER, o.xdsServer, true, tls));
        ConfigSource rest = ConfigSource.newBuilder().setApiConfigSource(ApiConfigSource.newBuilder()
                .setApiType(ApiConfigSource.ApiType.REST)
                .setTransportApiVersion(ApiVersion.V3)
                .addClusterNames(HTTP_CLUSTER)
                .setRefreshDelay(Duration.newBuilder().setSeconds(1))
                .setRequestTimeout(Duration.newBuilder().setSeconds(1)))
            .setResourceApiVersion(ApiVersion.V3).build();
        dyn.setCdsConfig(rest).setLdsConfig(rest);
        dyn.setAdsConfig(grpc(ApiConfigSource.ApiType.GRPC));
      }
      case FILES -> {
        if (o.publishDir == null) {
          throw new IllegalArgumentException("--mode files needs --publish-dir DIR (the directory"
              + " 'meridian serve --publish-dir DIR' writes)");
        }
        FilePublisher.Format format = o.publishFormat;
        Path dir = o.publishDir.toAbsolutePath().normalize();
        dyn.setCdsConfig(path(FilePublisher.file(dir, o.group, ResourceType.CLUSTER, format)));
        dyn.setLdsConfig(path(FilePublisher.file(dir, o.group, ResourceType.LISTENER, format)));
      }
    }
    return yaml(b.build());
  }

  private static ConfigSource path(Path file) {
    // Meridian replaces files by rename; watching the directory catches that (and symlink swaps).
    return ConfigSource.newBuilder().setPathConfigSource(PathConfigSource.newBuilder()
            .setPath(file.toString())
            .setWatchedDirectory(WatchedDirectory.newBuilder().setPath(file.getParent().toString())))
        .setResourceApiVersion(ApiVersion.V3).build();
  }

  private static ApiConfigSource grpc(ApiConfigSource.ApiType type) {
    return ApiConfigSource.newBuilder().setApiType(type).setTransportApiVersion(ApiVersion.V3)
        .setSetNodeOnFirstMessageOnly(true)
        .addGrpcServices(GrpcService.newBuilder().setEnvoyGrpc(
            GrpcService.EnvoyGrpc.newBuilder().setClusterName(XDS_CLUSTER)))
        .build();
  }

  private static HostPort server(Envoy o, int defaultPort) {
    return o.server == null ? new HostPort("127.0.0.1", defaultPort) : o.server;
  }

  private static Cluster cluster(String name, HostPort hostPort, boolean http2, TlsConfig tls) {
    Cluster.Builder c = Cluster.newBuilder().setName(name)
        .setConnectTimeout(Duration.newBuilder().setSeconds(1))
        // An IP literal needs no resolution; a host name is resolved and re-resolved.
        .setType(isIpLiteral(hostPort.host()) ? Cluster.DiscoveryType.STATIC
            : Cluster.DiscoveryType.STRICT_DNS)
        .setLoadAssignment(ClusterLoadAssignment.newBuilder().setClusterName(name)
            .addEndpoints(LocalityLbEndpoints.newBuilder().addLbEndpoints(LbEndpoint.newBuilder()
                .setEndpoint(Endpoint.newBuilder().setAddress(
                    address(hostPort.host(), hostPort.port()))))));
    if (http2) {
      // xDS over gRPC needs HTTP/2 to the management server.
      c.putTypedExtensionProtocolOptions("envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
          Any.pack(HttpProtocolOptions.newBuilder().setExplicitHttpConfig(
              HttpProtocolOptions.ExplicitHttpConfig.newBuilder()
                  .setHttp2ProtocolOptions(Http2ProtocolOptions.getDefaultInstance())).build()));
    }
    if (tls != null) {
      c.setTransportSocket(TransportSocket.newBuilder().setName("envoy.transport_sockets.tls")
          .setTypedConfig(Any.pack(upstreamTls(hostPort, http2, tls))));
    }
    return c.build();
  }

  /**
   * The TLS of a connection to Meridian (issue 20): Meridian's certificate is checked against the
   * CA and must name the host dialled (Envoy checks no name unless told); with a client
   * certificate, mTLS. gRPC servers (grpc-java's among them) refuse a TLS connection that does not
   * negotiate HTTP/2 with ALPN.
   */
  static UpstreamTlsContext upstreamTls(HostPort server, boolean http2, TlsConfig tls) {
    CommonTlsContext.Builder common = CommonTlsContext.newBuilder();
    if (tls.mutual()) {
      common.addTlsCertificates(TlsCertificate.newBuilder()
          .setCertificateChain(file(tls.certificateFile()))
          .setPrivateKey(file(tls.privateKeyFile())));
    }
    boolean ip = isIpLiteral(server.host());
    common.setValidationContext(CertificateValidationContext.newBuilder()
        .setTrustedCa(file(tls.caCertificateFile()))
        .addMatchTypedSubjectAltNames(SubjectAltNameMatcher.newBuilder()
            .setSanType(ip ? SubjectAltNameMatcher.SanType.IP_ADDRESS
                : SubjectAltNameMatcher.SanType.DNS)
            .setMatcher(StringMatcher.newBuilder().setExact(server.host()))));
    if (http2) {
      common.addAlpnProtocols("h2");
    }
    UpstreamTlsContext.Builder u = UpstreamTlsContext.newBuilder().setCommonTlsContext(common);
    if (!ip) {
      u.setSni(server.host()); // SNI carries host names only (RFC 6066 section 3)
    }
    return u.build();
  }

  private static DataSource file(Path p) {
    return DataSource.newBuilder().setFilename(p.toString()).build();
  }

  static boolean isIpLiteral(String host) {
    return host.matches("[0-9.]+") || host.contains(":");
  }

  private static Address address(String host, int port) {
    return Address.newBuilder().setSocketAddress(SocketAddress.newBuilder().setAddress(host)
        .setPortValue(port)).build();
  }

  private static String yaml(Bootstrap bootstrap) {
    try {
      JsonFormat.Printer printer = EnvoyTypeRegistry.get().printer();
      Object tree = new Yaml(new LoaderOptions()).load(printer.print(bootstrap));
      DumperOptions o = new DumperOptions();
      o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
      o.setIndent(2);
      o.setWidth(120);
      return new Yaml(o).dump(tree);
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new IllegalStateException(e);
    }
  }
}
