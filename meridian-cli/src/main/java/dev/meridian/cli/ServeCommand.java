package dev.meridian.cli;

import dev.meridian.config.ConfigException;
import dev.meridian.config.ReferenceCheck;
import dev.meridian.server.FilePublisher;
import dev.meridian.server.MeridianServer;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "serve", mixinStandardHelpOptions = true,
    description = "Serve xDS from a config file or directory, hot-reloading it on change.")
final class ServeCommand implements Callable<Integer> {
  @Option(names = "--config", required = true, paramLabel = "PATH",
      description = "A config file, or a directory of .yaml/.yml/.json config files.")
  Path config;

  @Option(names = "--xds-port", defaultValue = "18000", description = "gRPC xDS port (default ${DEFAULT-VALUE}).")
  int xdsPort;

  @Option(names = "--http-port", defaultValue = "18001",
      description = "HTTP port for /healthz (default ${DEFAULT-VALUE}).")
  int httpPort;

  @Option(names = "--bind", defaultValue = "0.0.0.0", description = "Address to listen on (default ${DEFAULT-VALUE}).")
  String bind;

  @Option(names = "--heartbeat-interval", paramLabel = "DURATION",
      description = "How often resources with a TTL are heartbeated, e.g. 5s or 500ms (default: a third of each TTL; never more).")
  String heartbeatInterval;

  @Option(names = "--reference-check", defaultValue = "warn", paramLabel = "MODE",
      description = "Dangling references on load (EDS cluster without endpoints, RDS name without route configuration, route to an unknown cluster): off, warn or reject (default ${DEFAULT-VALUE}).")
  String referenceCheck;

  @Option(names = "--rest-max-wait", defaultValue = "60s", paramLabel = "DURATION",
      description = "Longest a REST-JSON poll may be held with 'Prefer: wait=N' (default ${DEFAULT-VALUE}).")
  String restMaxWait;

  @Option(names = "--publish-dir", paramLabel = "DIR",
      description = "Also publish every group's resources as DIR/<group>/<type>.<ext> DiscoveryResponse files, for Envoy's path config sources.")
  Path publishDir;

  @Option(names = "--publish-format", defaultValue = "yaml", paramLabel = "FORMAT",
      description = "Format of published files: yaml, json or pb (default ${DEFAULT-VALUE}).")
  String publishFormat;

  @Option(names = "--log-level", defaultValue = "info", description = "debug, info, warn or error (default ${DEFAULT-VALUE}).")
  String logLevel;

  @Override
  public Integer call() throws Exception {
    Logging.configure(logLevel);
    ReferenceCheck check;
    java.time.Duration heartbeat = null;
    java.time.Duration maxWait;
    FilePublisher.Format format;
    try {
      check = ReferenceCheck.parse(referenceCheck);
      if (heartbeatInterval != null) {
        heartbeat = Durations.parse(heartbeatInterval);
      }
      maxWait = Durations.parse(restMaxWait);
      format = FilePublisher.Format.parse(publishFormat);
    } catch (IllegalArgumentException e) {
      System.err.println("meridian: " + e.getMessage());
      return 2;
    }
    MeridianServer server = new MeridianServer(new MeridianServer.Options(config, bind, xdsPort,
        httpPort, 1000, heartbeat, check, maxWait, publishDir, format));
    try {
      server.start();
    } catch (ConfigException e) {
      System.err.println("meridian: invalid config: " + e.getMessage());
      return 2;
    } catch (java.io.IOException e) {
      System.err.println("meridian: cannot listen: " + e.getMessage());
      return 3;
    }
    System.err.printf("meridian: serving xDS on %s:%d, HTTP on %s:%d, config %s%n", bind,
        server.xdsPort(), bind, server.httpPort(), config);
    Runtime.getRuntime().addShutdownHook(new Thread(server::close, "meridian-shutdown"));
    server.awaitTermination();
    return 0;
  }
}
