package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.server.MeridianServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

class ValidateCommandTest {
  @TempDir Path dir;
  final StringWriter out = new StringWriter();
  final StringWriter err = new StringWriter();

  int run(String... args) {
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    return cl.execute(args);
  }

  Path write(String yaml) throws Exception {
    Path f = dir.resolve("c.yaml");
    Files.writeString(f, yaml);
    return f;
  }

  static final String MAGLEV = "resources:\n- {'@type': type.googleapis.com/envoy.config.cluster.v3.Cluster,"
      + " name: greeter, type: EDS, lb_policy: MAGLEV,"
      + " eds_cluster_config: {eds_config: {ads: {}, resource_api_version: V3}}}\n";

  /** The case: a route to a cluster that does not exist. */
  static final String ROUTE_TO_NOWHERE = """
      resources:
        - "@type": type.googleapis.com/envoy.config.route.v3.RouteConfiguration
          name: routes
          virtual_hosts:
            - name: vh
              domains: ["*"]
              routes: [ { match: { prefix: "/" }, route: { cluster: nowhere } } ]
      """;

  static final String NOWHERE = "dangling reference: group 'default': route configuration 'routes' "
      + "virtual host 'vh' routes to cluster 'nowhere', which does not exist";

  @Test
  void grpcProfileExitsOneAndNamesResourceAndFieldWhenGrpcWouldNack() throws Exception {
    assertThat(run("validate", "--config", write(MAGLEV).toString(), "--profile", "grpc")).isEqualTo(1);
    assertThat(out.toString()).contains("ERROR Cluster greeter: lb_policy:")
        .contains("grpc profile: 1 error(s), 0 warning(s)");
  }

  @Test
  void withoutProfileTheSameConfigIsValid() throws Exception {
    assertThat(run("validate", "--config", write(MAGLEV).toString())).isEqualTo(0);
    assertThat(out.toString()).contains("valid: 1 resources");
  }

  @Test
  void anInvalidConfigExitsTwo() throws Exception {
    assertThat(run("validate", "--config", write("resources: [{name: x}]\n").toString())).isEqualTo(2);
    assertThat(err.toString()).contains("invalid config");
  }

  @Test
  void theBundledProxylessExampleHasNoGrpcFindings() {
    Path example = Path.of("..", "examples", "proxyless-grpc", "meridian.yaml");
    assertThat(run("validate", "--config", example.toString(), "--profile", "grpc")).isEqualTo(0);
    assertThat(out.toString()).contains("grpc profile: 0 error(s), 0 warning(s)");
  }

  /** Issue 18 §4: serve warns about a route to a missing cluster, so validate does too (exit 0). */
  @Test
  void aRouteToAMissingClusterIsAWarningAsServeLogsIt() throws Exception {
    assertThat(run("validate", "--config", write(ROUTE_TO_NOWHERE).toString())).isZero();
    assertThat(out.toString()).contains("valid: 1 resources in 1 group(s), 1 warning(s)")
        .contains("warning: " + NOWHERE);
  }

  /** Issue 18 §4: `serve --reference-check reject` refuses that config; validate exits 2. */
  @Test
  void referenceCheckRejectExitsTwoAsServeWouldRefuseTheConfig() throws Exception {
    assertThat(run("validate", "--config", write(ROUTE_TO_NOWHERE).toString(),
        "--reference-check", "reject")).isEqualTo(2);
    assertThat(err.toString()).contains("config rejected (--reference-check reject)")
        .contains(NOWHERE);
    assertThat(out.toString()).doesNotContain("valid");
  }

  /** A Cluster whose UpstreamTlsContext carries its client key inline. */
  static final String INLINE_KEY = "resources:\n"
      + dev.meridian.testing.ConfigFiles.clusterWithInlineKey("leaky", "KEY");

  @Test
  void inlineKeyMaterialIsAWarningAndUnderMtlsARejectionAsServeWouldSay() throws Exception {
    Path config = write(INLINE_KEY);
    assertThat(run("validate", "--config", config.toString())).isZero();
    assertThat(out.toString()).contains("1 warning(s)").contains("warning: inline key material: "
        + "group 'default': Cluster 'leaky' inlines key material at transport_socket.typed_config"
        + ".common_tls_context.tls_certificates[0].private_key.inline_string")
        .contains("reference it by SDS");
    assertThat(run("validate", "--config", config.toString(), "--mtls")).isEqualTo(2);
    assertThat(err.toString()).contains("config rejected (--mtls: key material only in Secrets)")
        .contains("Cluster 'leaky'", "--tls-client-ca");
  }

  @Test
  void referenceCheckOffSkipsDanglingReferencesAsServeDoes() throws Exception {
    assertThat(run("validate", "--config", write(ROUTE_TO_NOWHERE).toString(),
        "--reference-check", "off")).isZero();
    assertThat(out.toString()).endsWith("valid: 1 resources in 1 group(s)\n");
  }

  /** Issue 18 §4: an empty file or directory is not silently "valid with 0 resources". */
  @ParameterizedTest
  @ValueSource(strings = {"empty file", "empty resources", "empty directory"})
  void aConfigWithNoResourcesIsValidWithAWarning(String what) throws Exception {
    Path config = switch (what) {
      case "empty file" -> write("");
      case "empty resources" -> write("resources: []\n");
      default -> Files.createDirectory(dir.resolve("conf.d"));
    };
    assertThat(run("validate", "--config", config.toString())).isZero();
    assertThat(out.toString()).contains("valid: 0 resources in 1 group(s), 1 warning(s)")
        .contains("warning: empty config: no resources at all");
  }

  /**
   * Issue 18 §4, "validate runs exactly the checks serve runs": for one config, validate's
   * warnings are serve's logged warnings, line for line.
   */
  @Test
  void validatePrintsExactlyTheWarningsServeLogs() throws Exception {
    // A dangling route and, behind an API listener, a cluster grpc-java would NACK.
    Path config = write(ROUTE_TO_NOWHERE + """
          - "@type": type.googleapis.com/envoy.config.listener.v3.Listener
            name: greeter
            api_listener:
              api_listener:
                "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
                stat_prefix: greeter
                rds: { route_config_name: routes, config_source: { ads: {}, resource_api_version: V3 } }
                http_filters:
                  - name: router
                    typed_config: { "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router }
          - { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: c, type: STATIC, lb_policy: MAGLEV }
        """);
    List<String> logged = new ArrayList<>();
    Handler h = new Handler() {
      @Override public void publish(LogRecord r) {
        if (r.getLevel() == Level.WARNING) {
          synchronized (logged) {
            logged.add(new SimpleFormatter().formatMessage(r));
          }
        }
      }

      @Override public void flush() {}

      @Override public void close() {}
    };
    Logger logger = Logger.getLogger("dev.meridian.server");
    logger.addHandler(h);
    try (MeridianServer server = new MeridianServer(new MeridianServer.Options(config,
        "127.0.0.1", 0, 0, 1000)).start()) {
      assertThat(server.xdsPort()).isPositive();
    } finally {
      logger.removeHandler(h);
    }
    assertThat(run("validate", "--config", config.toString())).isZero();
    List<String> printed = out.toString().lines().filter(l -> l.startsWith("warning: "))
        .map(l -> l.substring("warning: ".length())).toList();
    assertThat(printed).contains(NOWHERE)
        .anySatisfy(l -> assertThat(l).startsWith("grpc profile: ERROR Cluster c: lb_policy"));
    synchronized (logged) {
      assertThat(printed).containsExactlyInAnyOrderElementsOf(logged);
    }
  }

  /** The trial's config: four values Envoy's own rules refuse, none a schema error. */
  static final String ENVOY_WOULD_REFUSE = """
      resources:
      - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
        name: payments
        connect_timeout: -1s
        type: STATIC
        load_assignment:
          cluster_name: payments
          endpoints:
          - lb_endpoints:
            - endpoint: {address: {socket_address: {address: 10.0.0.1, port_value: 99999}}}
      - "@type": type.googleapis.com/envoy.config.route.v3.RouteConfiguration
        name: routes
        virtual_hosts:
        - name: vh
          routes:
          - match: {prefix: /}
      """;

  /** Line (1-based) and column of the first {@code needle} in {@code text}, as "L:C". */
  static String at(String text, String needle) {
    int i = text.indexOf(needle);
    int line = (int) text.substring(0, i).chars().filter(c -> c == '\n').count() + 1;
    return line + ":" + (i - text.lastIndexOf('\n', i - 1));
  }

  /**
   * Envoy checks each resource against the validation rules of its API protos and rejects the
   * whole response for one broken rule (xDS spec, "ACK/NACK"): validate says so first, naming
   * file:line:column of each value, the resource, the field, the value and the rule.
   */
  @Test
  void whatEnvoyWouldRefuseIsInvalidWithEveryProblemAtItsValue() throws Exception {
    Path f = write(ENVOY_WOULD_REFUSE);
    String file = f.toString();
    assertThat(run("validate", "--config", file)).isEqualTo(2);
    assertThat(err.toString()).contains("4 problems")
        .contains(file + ":" + at(ENVOY_WOULD_REFUSE, "-1s")
            + ": Cluster payments: connect_timeout: -1s must be greater than 0s (duration.gt)")
        .contains(file + ":" + at(ENVOY_WOULD_REFUSE, "99999") + ": Cluster payments: "
            + "load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address"
            + ".port_value: 99999 ")
        .contains("(uint32.lte)")
        // a missing value is reported where it would go: in the mapping that lacks it
        .contains(file + ":" + at(ENVOY_WOULD_REFUSE, "name: vh") + ": RouteConfiguration routes: "
            + "virtual_hosts[0].domains: ")
        .contains("(repeated.min_items)")
        .contains(file + ":" + at(ENVOY_WOULD_REFUSE, "match: {prefix") + ": RouteConfiguration "
            + "routes: virtual_hosts[0].routes[0].action: ")
        .contains("(oneof.required)");
    assertThat(out.toString()).isEmpty();
  }

  @Test
  void validationOffLoadsWhatEnvoyWouldRefuseAsBefore() throws Exception {
    assertThat(run("validate", "--config", write(ENVOY_WOULD_REFUSE).toString(),
        "--validation", "off")).isZero();
    assertThat(out.toString()).contains("valid: 2 resources in 1 group(s)");
  }

  /** A rule inside a filter's typed_config is checked too: the packed message is Envoy's. */
  @Test
  void aRuleBrokenInsideTypedConfigIsFoundThere() throws Exception {
    String yaml = """
        resources:
        - "@type": type.googleapis.com/envoy.config.listener.v3.Listener
          name: l
          address: {socket_address: {address: 0.0.0.0, port_value: 10000}}
          filter_chains:
          - filters:
            - name: hcm
              typed_config:
                "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
                rds: {route_config_name: r, config_source: {ads: {}, resource_api_version: V3}}
                http_filters:
                - name: router
                  typed_config: {"@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router}
        """;
    Path f = write(yaml);
    assertThat(run("validate", "--config", f.toString())).isEqualTo(2);
    assertThat(err.toString()).contains(f + ":" + at(yaml, "\"@type\": type.googleapis.com/envoy.extensions.filters.network")
        + ": Listener l: filter_chains[0].filters[0].typed_config.stat_prefix: ")
        .contains("(string.min_len)");
  }

  @Test
  void anUnknownValidationModeIsAUsageErrorListingTheModes() throws Exception {
    assertThat(run("validate", "--config", write(MAGLEV).toString(), "--validation", "pgv"))
        .isEqualTo(2);
    assertThat(err.toString()).contains("'pgv' is not one of envoy, off");
  }

  /** A directory of the trial: a config, notes, a README and a broken file one level down. */
  private Path trialDirectory() throws Exception {
    Path conf = Files.createDirectory(dir.resolve("conf.d"));
    Files.writeString(conf.resolve("clusters.yaml"), "resources:\n- {'@type': "
        + "type.googleapis.com/envoy.config.cluster.v3.Cluster, name: c, type: STATIC}\n");
    Files.writeString(conf.resolve("notes.txt"), "to do\n");
    Files.writeString(conf.resolve("README.md"), "# config\n");
    Files.createDirectory(conf.resolve("sub"));
    Files.writeString(conf.resolve("sub/x.yaml"), "resources: [ broken\n");
    return conf;
  }

  @Test
  void aDirectoryNamesTheFilesItReadAndWarnsAboutASubdirectoryItDoesNot() throws Exception {
    Path conf = trialDirectory();
    assertThat(run("validate", "--config", conf.toString())).isZero();
    assertThat(out.toString()).isEqualTo(conf + ": valid: 1 resources in 1 group(s), 1 warning(s)\n"
        + "read: clusters.yaml\n"
        + "not read: README.md, notes.txt (not .yaml, .yml or .json)\n"
        + "warning: config_not_read path=" + conf.resolve("sub") + " reason=\"a subdirectory, not"
        + " read: a config directory's own files are read, not its subdirectories'; it holds"
        + " sub/x.yaml\" fix=\"move its files up into " + conf + ", or start its name with '.'"
        + " to keep it unread without this warning\"\n");
  }

  @Test
  void anInvalidDirectoryStillWarnsAboutWhatItDidNotRead() throws Exception {
    Path conf = trialDirectory();
    Files.writeString(conf.resolve("clusters.yaml"), "resources: [ {name: x} ]\n");
    assertThat(run("validate", "--config", conf.toString())).isEqualTo(2);
    assertThat(err.toString()).contains("meridian: invalid config: ")
        .contains("warning: config_not_read path=" + conf.resolve("sub"));
  }

  /**
   * What validate warns about in a directory is what serve logs, line for line, and serve's
   * config_load line names the files it read.
   */
  @Test
  void aDirectorysWarningsAreServesLogLinesAndConfigLoadNamesTheFilesRead() throws Exception {
    Path conf = trialDirectory();
    Files.writeString(conf.resolve("routes.yaml.bak"), ROUTE_TO_NOWHERE);
    List<String> logged = new ArrayList<>();
    List<String> info = new ArrayList<>();
    Handler h = new Handler() {
      @Override public void publish(LogRecord r) {
        synchronized (logged) {
          (r.getLevel() == Level.WARNING ? logged : info).add(new SimpleFormatter().formatMessage(r));
        }
      }

      @Override public void flush() {}

      @Override public void close() {}
    };
    Logger logger = Logger.getLogger("dev.meridian.server");
    logger.addHandler(h);
    try (MeridianServer server = new MeridianServer(new MeridianServer.Options(conf,
        "127.0.0.1", 0, 0, 1000)).start()) {
      assertThat(server.xdsPort()).isPositive();
    } finally {
      logger.removeHandler(h);
    }
    assertThat(run("validate", "--config", conf.toString())).isZero();
    List<String> printed = out.toString().lines().filter(l -> l.startsWith("warning: "))
        .map(l -> l.substring("warning: ".length())).toList();
    synchronized (logged) {
      assertThat(printed).hasSize(2).containsExactlyInAnyOrderElementsOf(logged);
      assertThat(info).anySatisfy(l -> assertThat(l)
          .startsWith("config_load result=ok resources=1 groups=1 path=" + conf)
          .endsWith(" files=1 read=clusters.yaml"));
    }
  }
}
