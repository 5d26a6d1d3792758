package dev.meridian.cli;

import dev.meridian.internal.config.ConfigException;
import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.etcd.EtcdTarget;
import dev.meridian.internal.config.ReferenceCheck;
import dev.meridian.internal.config.RuleCheck;
import dev.meridian.internal.server.Bounds;
import dev.meridian.internal.server.FilePublisher;
import dev.meridian.internal.server.MeridianServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

@Command(name = "serve", mixinStandardHelpOptions = true,
    description = "Serve xDS from a config file or directory, hot-reloading it on change, or from "
        + "the config stored in etcd (--config etcd://HOST:PORT/PREFIX), watching it.")
final class ServeCommand implements Callable<Integer> {
  /** What {@code --warmup} answers since the startup warm-up was removed (issue 19). */
  static final String WARMUP_REMOVED = "--warmup was removed with the startup warm-up, which did"
      + " not pay for itself; see docs/operations.md, \"Startup warm-up (removed)\"";

  @Spec CommandSpec spec;

  @Option(names = "--config", required = true, paramLabel = "PATH|URL",
      description = "A config file, a directory of .yaml/.yml/.json config files, or "
          + "etcd://HOST:PORT[,HOST:PORT...]/PREFIX (etcds:// for TLS to etcd; docs/etcd.md).")
  String config;

  @picocli.CommandLine.Mixin EtcdOptions etcd;

  @Option(names = "--xds-port", defaultValue = "18000", paramLabel = "PORT",
      description = "gRPC xDS port; 0: any free port (default ${DEFAULT-VALUE}).")
  int xdsPort;

  @Option(names = "--http-port", defaultValue = "18001", paramLabel = "PORT",
      description = "HTTP (admin) port: /healthz, /readyz, /config_dump, /clients, /metrics "
          + "(default ${DEFAULT-VALUE}).")
  int httpPort;

  @Option(names = "--bind", defaultValue = "0.0.0.0", paramLabel = "ADDR", description = "Address the xDS port listens on (default ${DEFAULT-VALUE}).")
  String bind;

  @Option(names = "--admin-bind", defaultValue = MeridianServer.Options.DEFAULT_ADMIN_BIND,
      paramLabel = "ADDR", description = "Address the HTTP (admin) port listens on; loopback only "
          + "unless set, since /config_dump shows every resource (default ${DEFAULT-VALUE}).")
  String adminBind;

  @Option(names = "--admin-allowed-hosts", paramLabel = "HOST[,HOST...]", split = ",",
      description = "Host names and addresses (no port) the HTTP (admin) port answers to besides "
          + "localhost, loopback addresses and --admin-bind (with a wildcard --admin-bind, every "
          + "address of this machine); a request naming another host is refused 421, so a web "
          + "page cannot reach it by DNS rebinding. '*': any host (default: none).")
  java.util.List<String> adminAllowedHosts = new java.util.ArrayList<>();

  @Option(names = "--max-connection-age", paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "Send GOAWAY to connections older than this, so clients rebalance across "
          + "replicas (default: never).")
  Duration maxConnectionAge;

  @Option(names = "--max-connection-age-grace", paramLabel = "DURATION", defaultValue = "10s",
      converter = DurationConverter.class,
      description = "After that GOAWAY, how long streams may go on before the connection is "
          + "closed (default ${DEFAULT-VALUE}).")
  Duration maxConnectionAgeGrace;

  @Option(names = "--permit-keepalive-time", paramLabel = "DURATION", defaultValue = "5s",
      converter = DurationConverter.class,
      description = "The most frequent client keepalive ping accepted; grpc-java pings at most "
          + "every 10s, Envoy per its connection_keepalive (default ${DEFAULT-VALUE}).")
  Duration permitKeepAliveTime;

  @Option(names = "--keepalive-time", paramLabel = "DURATION", defaultValue = "30s",
      converter = DurationConverter.class,
      description = "Ping idle client connections this often to find dead ones (default ${DEFAULT-VALUE}).")
  Duration keepAliveTime;

  @Option(names = "--keepalive-timeout", paramLabel = "DURATION", defaultValue = "10s",
      converter = DurationConverter.class,
      description = "Close a connection whose ping is unanswered this long (default ${DEFAULT-VALUE}).")
  Duration keepAliveTimeout;

  @Option(names = "--shutdown-timeout", paramLabel = "DURATION", defaultValue = "10s",
      converter = DurationConverter.class,
      description = "On SIGTERM/SIGINT, how long to wait for streams to end before forcing them "
          + "(default ${DEFAULT-VALUE}).")
  Duration shutdownTimeout;

  @Option(names = "--heartbeat-interval", paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "How often resources with a TTL are heartbeated, e.g. 5s or 500ms (default: a third of each TTL; never more).")
  Duration heartbeatInterval;

  @Option(names = "--reference-check", defaultValue = "warn", paramLabel = "MODE",
      converter = Choice.ReferenceChecks.class, completionCandidates = Choice.ReferenceChecks.class,
      description = "Dangling references on load (EDS cluster without endpoints, RDS name without route configuration, route to an unknown cluster): ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
  ReferenceCheck check;

  @Option(names = "--validation", defaultValue = "envoy", paramLabel = "RULES",
      converter = Choice.RuleChecks.class, completionCandidates = Choice.RuleChecks.class,
      description = "Check every resource on load and reload against the rules Envoy checks it "
          + "against (the validation rules of its API protos): ${COMPLETION-CANDIDATES} (default "
          + "${DEFAULT-VALUE}: a config that breaks one is rejected whole; off: served anyway, "
          + "and warned about at start).")
  RuleCheck ruleCheck;

  @Option(names = "--allow-emptying",
      description = "Apply a reload (file or etcd) that would empty what is served: the whole "
          + "config, a type connected clients subscribe to, a config file left blank. Default: "
          + "such a reload is held, logged (config_reload result=held) and shown on /status, and "
          + "the last good config keeps being served.")
  boolean allowEmptying;

  @Option(names = "--rest-max-wait", defaultValue = "60s", paramLabel = "DURATION",
      converter = DurationConverter.class,
      description = "Longest a REST-JSON poll may be held with 'Prefer: wait=N' (default ${DEFAULT-VALUE}).")
  Duration restMaxWait;

  @Option(names = "--publish-dir", paramLabel = "DIR",
      description = "Also publish every group's resources as DIR/<group>/<type>.<ext> DiscoveryResponse files, for Envoy's path config sources.")
  Path publishDir;

  @Option(names = "--publish-format", defaultValue = "yaml", paramLabel = "FORMAT",
      converter = Choice.PublishFormats.class, completionCandidates = Choice.PublishFormats.class,
      description = "Format of published files: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
  FilePublisher.Format format;

  @Option(names = "--publish-secrets",
      description = "Also publish each group's Secrets (private keys in plain text, files 0600), whatever secret_access says; with --publish-dir. Default: Secrets are served over xDS only.")
  boolean publishSecrets;

  @Option(names = "--tls-cert", paramLabel = "FILE",
      description = "PEM certificate chain: the xDS port (and the REST port) serve TLS; with "
          + "--tls-key. Re-read when it changes (docs/security.md).")
  Path tlsCert;

  @Option(names = "--tls-key", paramLabel = "FILE",
      description = "PEM (PKCS#8) private key of --tls-cert. Re-read when it changes.")
  Path tlsKey;

  @Option(names = "--tls-client-ca", paramLabel = "FILE",
      description = "PEM CA bundle: clients must present a certificate that chains to it (mTLS); "
          + "a stream's identity is its URI SAN (SPIFFE ID), else its first DNS SAN.")
  Path tlsClientCa;

  @Option(names = "--allow-plaintext-secrets",
      description = "Streams without a verified client certificate receive Secrets too; for "
          + "local development only (warned at start).")
  boolean allowPlaintextSecrets;

  @Option(names = "--csds-identity", paramLabel = "GLOB",
      description = "Under mTLS, the client identities (a glob, e.g. "
          + "'spiffe://example.org/ns/ops/*'; a glob without '://' matches DNS identities) "
          + "that may read CSDS on the xDS port, which shows "
          + "every client's config (default: none).")
  String csdsIdentity;

  @Option(names = "--rest-port", paramLabel = "PORT",
      description = "REST-JSON discovery (POST /v3/discovery:<type>) on this port, with the xDS "
          + "port's TLS and identity rules; 0: any free port (default: off).")
  Integer restPort;

  @Option(names = "--max-streams", paramLabel = "N",
      defaultValue = "" + Bounds.DEFAULT_MAX_STREAMS,
      description = "Most xDS streams open at once on this server; one more is refused "
          + "RESOURCE_EXHAUSTED (default ${DEFAULT-VALUE}).")
  int maxStreams;

  @Option(names = "--max-streams-per-connection", paramLabel = "N",
      defaultValue = "" + Bounds.DEFAULT_MAX_STREAMS_PER_CONNECTION,
      description = "HTTP/2 MAX_CONCURRENT_STREAMS: most streams one connection may have open; "
          + "gRPC clients queue more (default ${DEFAULT-VALUE}).")
  int maxStreamsPerConnection;

  @Option(names = "--max-request-rate", paramLabel = "N",
      defaultValue = "" + Bounds.DEFAULT_MAX_REQUEST_RATE,
      description = "Requests a second one stream may send on average (ten seconds' worth at "
          + "once, one more per response sent); beyond, the stream is closed RESOURCE_EXHAUSTED "
          + "(default ${DEFAULT-VALUE}).")
  int maxRequestRate;

  @Option(names = "--max-request-bytes", paramLabel = "BYTES",
      defaultValue = "" + Bounds.DEFAULT_MAX_REQUEST_BYTES,
      description = "Largest xDS request message (gRPC: RESOURCE_EXHAUSTED) or REST-JSON body "
          + "(413) (default ${DEFAULT-VALUE}, 16 MiB).")
  int maxRequestBytes;

  @Option(names = "--max-resource-names", paramLabel = "N",
      defaultValue = "" + Bounds.DEFAULT_MAX_RESOURCE_NAMES,
      description = "Most resource names one xDS request may carry, and one stream may be "
          + "subscribed to over every type; beyond, the stream ends RESOURCE_EXHAUSTED (REST-JSON: "
          + "413) (default ${DEFAULT-VALUE}).")
  int maxResourceNames;

  @Option(names = "--max-request-memory", paramLabel = "BYTES",
      description = "Encoded bytes of requests the server holds at once, read and not yet "
          + "handled, gRPC and REST-JSON together; a request beyond is refused (gRPC: "
          + "RESOURCE_EXHAUSTED, REST-JSON: 503) and retried by its client (default: an eighth of "
          + "the heap, at least --max-request-bytes).")
  long maxRequestMemory;

  @Option(names = "--max-stream-resets", paramLabel = "N",
      defaultValue = "" + Bounds.DEFAULT_MAX_STREAM_RESETS,
      description = "RST_STREAM frames one connection may send in 10 seconds before it is "
          + "closed (HTTP/2 rapid reset) (default ${DEFAULT-VALUE}).")
  int maxStreamResets;

  @Option(names = "--http-threads", paramLabel = "N",
      defaultValue = "" + Bounds.DEFAULT_HTTP_THREADS,
      description = "Threads of each HTTP port (admin, REST) (default ${DEFAULT-VALUE}).")
  int httpThreads;

  @Option(names = "--http-queue", paramLabel = "N",
      defaultValue = "" + Bounds.DEFAULT_HTTP_QUEUE,
      description = "Requests of each HTTP port that may wait for a thread; beyond, new "
          + "connections are closed (default ${DEFAULT-VALUE}).")
  int httpQueue;

  @Option(names = "--http-request-timeout", paramLabel = "DURATION", defaultValue = "10s",
      converter = DurationConverter.class,
      description = "Time an HTTP client has to send its request (headers, REST body); its "
          + "response then has six times that; a slower connection is closed "
          + "(default ${DEFAULT-VALUE}).")
  Duration httpRequestTimeout;

  @Option(names = "--max-rest-long-polls", paramLabel = "N",
      defaultValue = "" + Bounds.DEFAULT_MAX_REST_LONG_POLLS,
      description = "REST-JSON polls held at once (Prefer: wait); one more is answered 503 "
          + "with Retry-After (default ${DEFAULT-VALUE}).")
  int maxRestLongPolls;

  @Option(names = "--handshake-timeout", paramLabel = "DURATION", defaultValue = "10s",
      converter = DurationConverter.class,
      description = "Time a new xDS connection has to finish its TLS handshake (if any) and send "
          + "the HTTP/2 preface; a slower one is closed (default ${DEFAULT-VALUE}).")
  Duration handshakeTimeout;

  @Option(names = "--max-connections", paramLabel = "N",
      description = "Most xDS connections open at once, counted from accept; one more is closed "
          + "at once (default: the open-files limit less a tenth of it, at least 256, kept for "
          + "config, etcd and the HTTP ports).")
  int maxConnections;

  @Option(names = "--max-connections-per-peer", paramLabel = "N",
      description = "Most xDS connections of one peer: its IP address, under mTLS its client "
          + "identity; one more is closed (default: half of --max-connections, at least 10).")
  int maxConnectionsPerPeer;

  @Option(names = "--max-streams-per-peer", paramLabel = "N",
      description = "Most xDS streams of one peer (IP address; under mTLS, client identity); one "
          + "more is refused RESOURCE_EXHAUSTED (default: half of --max-streams, at least 10).")
  int maxStreamsPerPeer;

  @Option(names = "--message-receive-timeout", paramLabel = "DURATION", defaultValue = "10s",
      converter = DurationConverter.class,
      description = "Time from the first byte of an xDS request message to its last; a slower "
          + "message closes its connection (default ${DEFAULT-VALUE}).")
  Duration messageReceiveTimeout;

  @Option(names = "--max-partial-bytes", paramLabel = "BYTES",
      description = "Bytes of xDS request messages received in part, across the server; the "
          + "stream that would go beyond fails RESOURCE_EXHAUSTED (default: a quarter of the JVM's "
          + "maximum heap).")
  long maxPartialBytes;

  @Option(names = "--max-partial-bytes-per-connection", paramLabel = "BYTES",
      description = "The same per connection (default: twice --max-request-bytes).")
  long maxPartialBytesPerConnection;

  @Option(names = "--control-plane-id", paramLabel = "ID",
      description = "Names this replica in every response (control_plane.identifier), so CSDS "
          + "and client logs show who served a config (default: meridian@<host name>).")
  String controlPlaneId;

  @Option(names = "--authority", paramLabel = "NAME",
      description = "Serve the xdstp:// resources of this authority (xDS federation, gRFC A47); "
          + "repeatable. A request for another authority's xdstp name is answered as "
          + "does-not-exist. Default: every authority in the config.")
  java.util.List<String> authorities = new java.util.ArrayList<>();

  /** Read by the {@code ./meridian} launcher, which adds its JVM flags; accepted here for that. */
  @Option(names = "--fleet",
      description = "JVM tuning for a large fleet: ./meridian adds its JIT and G1 flags "
          + "(docs/operations.md, \"Fleet tuning\"). The server itself starts as without it.")
  boolean fleet;

  /** Issue 19: the warm-up is gone; its flag says so instead of being an unknown option. */
  @Option(names = "--warmup", hidden = true, arity = "0..1", paramLabel = "DURATION",
      description = "Removed, with the startup warm-up (docs/operations.md).")
  void warmup(String ignored) {
    throw new ParameterException(spec.commandLine(), WARMUP_REMOVED);
  }

  @Option(names = "--log-level", defaultValue = "info", paramLabel = "LEVEL",
      converter = Choice.LogLevels.class, completionCandidates = Choice.LogLevels.class,
      description = "${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
  Logging.Level logLevel;

  @Option(names = "--log-format", defaultValue = "text", paramLabel = "FORMAT",
      converter = Choice.LogFormats.class, completionCandidates = Choice.LogFormats.class,
      description = "${COMPLETION-CANDIDATES}: json writes one object per line with the text "
          + "format's keys (default ${DEFAULT-VALUE}).")
  Logging.Format logFormat;

  /** The bounds flags (docs/reliability.md); a value out of range is a usage error. */
  Bounds bounds() {
    try {
      return new Bounds(maxStreams, maxStreamsPerConnection, maxRequestRate, maxRequestBytes,
          maxStreamResets, httpThreads, httpQueue, httpRequestTimeout, maxRestLongPolls,
          handshakeTimeout, maxConnections, maxConnectionsPerPeer, maxStreamsPerPeer,
          messageReceiveTimeout, maxPartialBytes, maxPartialBytesPerConnection, maxResourceNames,
          maxRequestMemory);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  @Override
  public Integer call() throws Exception {
    if ((tlsCert == null) != (tlsKey == null)) {
      throw new ParameterException(spec.commandLine(),
          "--tls-cert and --tls-key go together: a certificate and its private key");
    }
    if (csdsIdentity != null
        && dev.meridian.internal.protocol.Identity.globProblem(csdsIdentity) != null) {
      throw new ParameterException(spec.commandLine(), "--csds-identity: "
          + dev.meridian.internal.protocol.Identity.globProblem(csdsIdentity));
    }
    if (tlsClientCa != null && tlsCert == null) {
      throw new ParameterException(spec.commandLine(),
          "--tls-client-ca needs --tls-cert and --tls-key: mTLS is TLS with client certificates");
    }
    if (publishSecrets && publishDir == null) {
      throw new ParameterException(spec.commandLine(),
          "--publish-secrets needs --publish-dir: it says what the published files hold");
    }
    Bounds bounds = bounds();
    for (String host : adminAllowedHosts) {
      try {
        MeridianServer.Options.checkAdminAllowedHost(host);
      } catch (IllegalArgumentException e) {
        throw new ParameterException(spec.commandLine(), "--admin-allowed-hosts: "
            + e.getMessage());
      }
    }
    Logging.configure(logLevel, logFormat);
    // The server is the whole process: an Error in any thread (gRPC's and the JDK's HTTP
    // dispatcher too, not only Meridian's own) ends it, so that its supervisor restarts it.
    Thread.setDefaultUncaughtExceptionHandler(
        dev.meridian.internal.config.CoreThreads.PROCESS_HANDLER);
    dev.meridian.internal.etcd.EtcdConfigSource store = null;
    if (EtcdTarget.isEtcd(config)) {
      EtcdTarget target = etcd.target(spec, config);
      try {
        store = new dev.meridian.internal.etcd.EtcdConfigSource(target, new ConfigLoader(ruleCheck)).connect();
      } catch (java.io.IOException e) {
        System.err.println("meridian: " + e.getMessage());
        return 2;
      }
    } else {
      etcd.rejectFor(spec, config);
    }
    MeridianServer server = new MeridianServer(
        new MeridianServer.Options(store == null ? Path.of(config) : null, bind, xdsPort,
            httpPort, 1000)
            .withAdminBind(adminBind)
            .withAdminAllowedHosts(adminAllowedHosts)
            .withMaxConnectionAge(maxConnectionAge, maxConnectionAgeGrace)
            .withKeepAlive(permitKeepAliveTime, keepAliveTime, keepAliveTimeout)
            .withShutdownTimeout(shutdownTimeout)
            .withHeartbeatInterval(heartbeatInterval)
            .withReferenceCheck(check)
            .withRuleCheck(ruleCheck)
            .withRestMaxWait(restMaxWait)
            .withPublish(publishDir, format)
            .withPublishSecrets(publishSecrets)
            .withAllowEmptying(allowEmptying)
            .withTls(tlsCert == null ? null
                : new MeridianServer.Options.Tls(tlsCert, tlsKey, tlsClientCa))
            .withRestPort(restPort)
            .withAllowPlaintextSecrets(allowPlaintextSecrets)
            .withCsdsIdentity(csdsIdentity)
            .withControlPlaneId(controlPlaneId)
            .withAuthorities(new java.util.LinkedHashSet<>(authorities))
            .withBounds(bounds), store)
        .logLevels(new Logging.JulLevels());
    try {
      server.start();
    } catch (MeridianServer.InvalidTls e) {
      System.err.println("meridian: TLS files cannot be used:");
      e.problems().forEach(p -> System.err.println("  " + p));
      return 2;
    } catch (ConfigException e) {
      System.err.println("meridian: invalid config: " + e.getMessage());
      return 2;
    } catch (MeridianServer.CannotListen e) {
      System.err.println("meridian: " + e.getMessage()); // names the address, flag and a way out
      return 3;
    } catch (java.io.IOException e) {
      System.err.println("meridian: cannot listen: " + e.getMessage());
      return 3;
    }
    // The first part is parsed by tools; what issue 20 added follows the config.
    System.err.printf("meridian: serving xDS on %s:%d, HTTP on %s:%d, config %s (xDS %s%s)%n",
        bind, server.xdsPort(), adminBind, server.httpPort(),
        store == null ? config : config + ", watched; ready once its first config is loaded",
        tlsCert == null ? "plaintext" : tlsClientCa == null ? "over TLS" : "over mTLS",
        server.restPort() < 0 ? "" : "; REST on " + bind + ":" + server.restPort());
    Signals.onTermination(server::close);
    // Any other way the JVM exits (System.exit, a signal we do not handle) still closes cleanly.
    Runtime.getRuntime().addShutdownHook(new Thread(server::close, "meridian-shutdown"));
    server.awaitTermination();
    return 0;
  }
}
