package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;

/** What a new user meets on a typo: issue 18, section 6. */
class UsageErrorsTest {
  final StringWriter out = new StringWriter();
  final StringWriter err = new StringWriter();

  int run(String... args) {
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    return cl.execute(args);
  }

  static final String LEVELS = "debug, info, warn, error";
  static final String CLIENT = "--server 127.0.0.1:1 --type clusters";
  static final String RESOLVE = "--server 127.0.0.1:1 --listener l --path /a.B/C";

  /** Every option whose value is one of a set, on every command that has it. */
  static Stream<Arguments> valueSetOptions() {
    return Stream.of(
        Arguments.of("serve --config c.yaml --log-level verbose", LEVELS),
        Arguments.of("get " + CLIENT + " --log-level verbose", LEVELS),
        Arguments.of("watch " + CLIENT + " --log-level verbose", LEVELS),
        Arguments.of("resolve " + RESOLVE + " --log-level verbose", LEVELS),
        Arguments.of("serve --config c.yaml --reference-check loud", "off, warn, reject"),
        Arguments.of("validate --config c.yaml --reference-check loud", "off, warn, reject"),
        Arguments.of("serve --config c.yaml --publish-format xml", "yaml, json, pb"),
        Arguments.of("bootstrap envoy --mode files --publish-format xml", "yaml, json, pb"),
        Arguments.of("get " + CLIENT + " -o xml", "table, wide, name, yaml, json"),
        Arguments.of("watch " + CLIENT + " -o table", "yaml, json"),
        Arguments.of("resolve " + RESOLVE + " -o table", "yaml, json"),
        Arguments.of("validate --config c.yaml --profile envoy", "grpc"),
        Arguments.of("bootstrap envoy --mode carrier-pigeon", "ads, delta-ads, xds, delta-xds, rest, files"));
  }

  /** Issue 18 §6: `--log-level verbose` was silently info; an unknown value lists the valid ones. */
  @ParameterizedTest
  @MethodSource("valueSetOptions")
  void anUnknownValueIsAnErrorListingTheValidOnes(String args, String valid) {
    String[] argv = args.split(" ");
    String bad = argv[argv.length - 1];
    assertThat(run(argv)).isEqualTo(2);
    assertThat(err.toString()).contains("'" + bad + "' is not one of " + valid + "\n");
    assertThat(out.toString()).isEmpty();
  }

  @Test
  void valuesAreAcceptedInAnyCase() {
    assertThat(new Choice.LogLevels().convert("WARN")).isEqualTo(Logging.Level.WARN);
    assertThat(new Choice.Modes().convert("Delta-ADS")).isEqualTo(BootstrapCommand.Mode.DELTA_ADS);
  }

  /** Issue 18 §6: a bad option gets one line and a hint to --help, not the 60-line usage. */
  @ParameterizedTest
  @ValueSource(strings = {"serve --config c.yaml --shutdown-timeout 5", "serve --config c.yaml --xds-port abc",
      "serve --config c.yaml --verbose", "serve", "get --srever 127.0.0.1:1 --type clusters",
      "bootstrap envoy --mode ads --server",
      "serve --config c.yaml --admin-allowed-hosts ops.example,ops.example:18001"})
  void aBadOptionPrintsTheErrorAndAHintNotTheUsage(String args) {
    assertThat(run(args.split(" "))).isEqualTo(2);
    String command = args.startsWith("bootstrap") ? "meridian bootstrap envoy"
        : "meridian " + args.split(" ")[0];
    List<String> lines = err.toString().lines().toList();
    assertThat(lines.get(0)).startsWith(command + ": ");
    assertThat(lines.get(lines.size() - 1)).isEqualTo("Try '" + command + " --help' for usage.");
    assertThat(lines).hasSizeLessThanOrEqualTo(3); // error, suggestions for a misspelt option, hint
    assertThat(err.toString()).doesNotContain("Usage:");
  }

  /**
   * Issue 19: the startup warm-up was removed, and its flag with it. Using it is a usage error
   * that says so and where to read why, in any form, with or without --fleet; --help does not
   * list it.
   */
  @ParameterizedTest
  @ValueSource(strings = {"serve --config c.yaml --warmup 20s", "serve --config c.yaml --warmup",
      "serve --config c.yaml --fleet --warmup 0s", "serve --warmup=5s --config c.yaml"})
  void theRemovedWarmupFlagSaysItWasRemovedAndWhereToRead(String args) {
    assertThat(run(args.split(" "))).isEqualTo(2);
    assertThat(err.toString().lines()).containsExactly(
        "meridian serve: --warmup was removed with the startup warm-up, which did not pay for"
            + " itself; see docs/operations.md, \"Startup warm-up (removed)\"",
        "Try 'meridian serve --help' for usage.");
    assertThat(out.toString()).isEmpty();
  }

  @Test
  void theSectionTheRemovedWarmupPointsToExists() throws Exception {
    String ops = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "operations.md"));
    assertThat(ServeCommand.WARMUP_REMOVED).contains("docs/operations.md, \"Startup warm-up (removed)\"");
    assertThat(ops).contains("\n### Startup warm-up (removed)\n");
  }

  @Test
  void publishSecretsWithoutAPublishDirIsAUsageError() {
    assertThat(run("serve", "--config", "c.yaml", "--publish-secrets")).isEqualTo(2);
    assertThat(err.toString().lines()).containsExactly(
        "meridian serve: --publish-secrets needs --publish-dir: it says what the published files"
            + " hold",
        "Try 'meridian serve --help' for usage.");
  }

  @Test
  void serveHelpListsFleetButNotTheRemovedWarmup() {
    assertThat(run("serve", "--help")).isZero();
    assertThat(out.toString()).contains("--fleet").doesNotContain("--warmup")
        .doesNotContain("warm-up");
  }

  @Test
  void aCsdsIdentityGlobThatCanMatchNoIdentityIsAUsageError() {
    assertThat(run("serve", "--config", "c.yaml", "--csds-identity", "spiffe:/example.org/ops/*"))
        .isEqualTo(2);
    assertThat(err.toString()).contains("--csds-identity: identity glob 'spiffe:/example.org/ops/*' "
        + "is neither a URI glob");
  }

  @Test
  void aMisspeltOptionGetsASuggestion() {
    assertThat(run("serve", "--config", "c.yaml", "--xds-prot", "0")).isEqualTo(2);
    assertThat(err.toString()).contains("Unknown options: '--xds-prot'")
        .contains("Possible solutions: --xds-port");
  }

  /** Issue 18 §6: `--server localhost` ended in `UNAVAILABLE io exception`. */
  @ParameterizedTest
  @ValueSource(strings = {"get --type clusters", "watch --type clusters",
      "resolve --listener l --path /a.B/C", "status", "bootstrap envoy --mode ads",
      "bootstrap grpc --node-id n"})
  void aServerWithoutAPortIsAUsageError(String args) {
    List<String> argv = new ArrayList<>(List.of(args.split(" ")));
    argv.addAll(List.of("--server", "localhost"));
    assertThat(run(argv.toArray(String[]::new))).isEqualTo(2);
    assertThat(err.toString()).contains("'--server': needs HOST:PORT (e.g. 127.0.0.1:18000), not 'localhost'");
  }

  /** Every command that takes --tls-*, with its other required flags, and its name. */
  static final List<String[]> TLS_COMMANDS = List.of(
      new String[] {"get " + CLIENT, "meridian get"},
      new String[] {"watch " + CLIENT, "meridian watch"},
      new String[] {"resolve " + RESOLVE, "meridian resolve"},
      new String[] {"status --server 127.0.0.1:1", "meridian status"},
      new String[] {"bootstrap envoy --mode ads --tls-ca ca.crt", "meridian bootstrap envoy"},
      new String[] {"bootstrap grpc --server 127.0.0.1:1 --node-id n", "meridian bootstrap grpc"});

  static Stream<Arguments> halfAClientIdentity() {
    return TLS_COMMANDS.stream().flatMap(c -> Stream.of(
        Arguments.of(c[0] + " --tls-cert c.crt", c[1], "--tls-cert needs --tls-key"),
        Arguments.of(c[0] + " --tls-key c.key", c[1], "--tls-key needs --tls-cert")));
  }

  /** Issue 20: a client certificate without its key, or the reverse, is a usage error. */
  @ParameterizedTest
  @MethodSource("halfAClientIdentity")
  void aClientCertificateWithoutItsKeyIsAUsageError(String args, String command, String error) {
    assertThat(run(args.split(" "))).isEqualTo(2);
    assertThat(err.toString().lines().toList()).containsExactly(command + ": " + error
        + (error.startsWith("--tls-cert") ? " (the certificate's private key)"
            : " (the certificate of that key)"),
        "Try '" + command + " --help' for usage.");
    assertThat(out.toString()).isEmpty();
  }

  /** Issue 20: the commands that connect read the files first; a bad one is named with its flag. */
  @ParameterizedTest
  @ValueSource(ints = {0, 1, 2, 3})
  void aTlsFileThatCannotBeReadIsAUsageErrorNamingItsFlag(int command) {
    String[] c = TLS_COMMANDS.get(command);
    String missing = "/nonexistent/meridian-test/ca.crt";
    assertThat(run((c[0] + " --tls-ca " + missing).split(" "))).isEqualTo(2);
    assertThat(err.toString().lines().toList()).containsExactly(
        c[1] + ": --tls-ca: " + missing + ": no such file", "Try '" + c[1] + " --help' for usage.");
  }

  /** Envoy checks an upstream's certificate only against a CA it is given: no CA, no bootstrap. */
  @Test
  void anEnvoyBootstrapWithAClientCertificateNeedsACa() {
    assertThat(run("bootstrap", "envoy", "--mode", "ads", "--tls-cert", "c.crt", "--tls-key",
        "c.key")).isEqualTo(2);
    assertThat(err.toString()).startsWith("meridian bootstrap envoy: --tls-ca is required with "
        + "--tls-cert");
    assertThat(out.toString()).isEmpty();
  }

  @Test
  void hostPortAcceptsNamesAndBracketedIpv6AndRejectsTheRest() {
    assertThat(HostPort.parse("meridian.internal:18000")).isEqualTo(new HostPort("meridian.internal", 18000));
    assertThat(HostPort.parse("[::1]:18000").toString()).isEqualTo("[::1]:18000");
    for (String bad : List.of("localhost", ":18000", "host:", "host:0", "host:65536", "host:x", "::1:18000")) {
      assertThat(catchConversion(bad)).as(bad).isNotNull();
    }
  }

  // Review of issue 18 §6: a bracketed IPv6 address without a port is missing the port, not the
  // brackets.
  @Test
  void bracketedIpv6WithoutAPortIsToldItNeedsAPort() {
    assertThat(catchConversion("[::1]")).hasMessageContaining("needs HOST:PORT")
        .hasMessageNotContaining("brackets");
    assertThat(catchConversion("[::1]:")).hasMessageContaining("needs HOST:PORT");
    assertThat(catchConversion("::1")).hasMessageContaining("brackets");
  }

  private static Exception catchConversion(String s) {
    try {
      new HostPort.Converter().convert(s);
      return null;
    } catch (CommandLine.TypeConversionException e) {
      return e;
    }
  }

  /**
   * Issue 18 §6: `resolve --help` (and every command) describes every option, and names every
   * value: no `<bind>`-style placeholder made from a field name.
   */
  @Test
  void everyOptionOfEveryCommandIsDescribedWithANamedValue() {
    List<String> problems = new ArrayList<>();
    walk(Main.commandLine().getCommandSpec(), problems);
    assertThat(problems).isEmpty();
  }

  private static void walk(CommandSpec spec, List<String> problems) {
    if (String.join("", spec.usageMessage().description()).isBlank()) {
      problems.add(spec.qualifiedName() + ": no description");
    }
    List<ArgSpec> args = new ArrayList<>(spec.options());
    args.addAll(spec.positionalParameters());
    for (ArgSpec a : args) {
      String name = spec.qualifiedName() + " " + (a.isOption()
          ? ((CommandLine.Model.OptionSpec) a).longestName() : a.paramLabel());
      if (String.join("", a.description()).isBlank()) {
        problems.add(name + ": no description");
      }
      if (a.arity().max() > 0 && a.paramLabel().matches("<.*>")) {
        problems.add(name + ": placeholder " + a.paramLabel());
      }
    }
    for (CommandLine sub : spec.subcommands().values()) {
      walk(sub.getCommandSpec(), problems);
    }
  }
}
