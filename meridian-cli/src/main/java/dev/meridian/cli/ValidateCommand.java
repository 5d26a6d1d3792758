package dev.meridian.cli;

import dev.meridian.internal.config.ConfigChecks;
import dev.meridian.internal.config.ConfigDirectory;
import dev.meridian.internal.config.ConfigException;
import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.config.GrpcProfile;
import dev.meridian.internal.config.ReferenceCheck;
import dev.meridian.internal.config.RuleCheck;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "validate", mixinStandardHelpOptions = true,
    description = {"Load a config file or directory as `serve` would and run the checks `serve` runs "
        + "on every load, without serving: Envoy's own rules (--validation), a config with no resources, dangling references "
        + "(--reference-check), key material inlined outside Secrets (--mtls) and, for a config with API listeners, the grpc profile. What `serve` "
        + "would log as a warning is printed as 'warning: ...'.",
        "With --profile grpc, also report what proxyless grpc-java clients and servers would reject "
            + "(ERROR: NACKed) or silently ignore (WARNING), naming the resource and field.",
        "Exit status: 0 valid (warnings included), 1 grpc-java would reject something, 2 invalid "
            + "config or, with --reference-check reject or --mtls, a config `serve` would refuse."})
final class ValidateCommand implements Callable<Integer> {
  /** {@code --profile}: the client rules to check against. */
  enum Profile { GRPC }

  @Option(names = "--config", required = true, paramLabel = "PATH",
      description = "A config file, or a directory of .yaml/.yml/.json config files.")
  Path config;

  @Option(names = "--profile", paramLabel = "PROFILE",
      converter = Choice.Profiles.class, completionCandidates = Choice.Profiles.class,
      description = "Client profile to check against: ${COMPLETION-CANDIDATES} (grpc-java 1.85 "
          + "xDS rules).")
  Profile profile;

  @Option(names = "--reference-check", defaultValue = "warn", paramLabel = "MODE",
      converter = Choice.ReferenceChecks.class, completionCandidates = Choice.ReferenceChecks.class,
      description = "As `serve --reference-check`: dangling references (EDS cluster without "
          + "endpoints, RDS name without route configuration, route to an unknown cluster) are "
          + "ignored, warnings, or make the config rejected (exit 2): ${COMPLETION-CANDIDATES} "
          + "(default ${DEFAULT-VALUE}).")
  ReferenceCheck referenceCheck;

  @Option(names = "--mtls",
      description = "Check as `serve --tls-client-ca` (mTLS) would: key material inlined in a "
          + "resource that is not a Secret (a Cluster's UpstreamTlsContext private_key, ...) makes "
          + "the config rejected (exit 2) instead of a warning.")
  boolean mtls;

  @Option(names = "--validation", defaultValue = "envoy", paramLabel = "RULES",
      converter = Choice.RuleChecks.class, completionCandidates = Choice.RuleChecks.class,
      description = "As `serve --validation`: check every resource against the rules Envoy "
          + "checks it against (${COMPLETION-CANDIDATES}; default ${DEFAULT-VALUE}). A broken "
          + "rule makes the config invalid (exit 2), each named with file:line:column, resource, "
          + "field, value and rule.")
  RuleCheck ruleCheck;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    ConfigLoader.Loaded loaded;
    try {
      loaded = new ConfigLoader(ruleCheck).load(config);
    } catch (ConfigException e) {
      err.println("meridian: invalid config: " + e.getMessage());
      // What was not read may be why: a config moved into a subdirectory, say.
      listing().warnings().forEach(w -> err.println("warning: " + w));
      return 2;
    }
    ConfigDirectory.Listing listing = listing();
    // The very checks serve runs on this config (ConfigChecks), with the same mode.
    ConfigChecks.Result checks = ConfigChecks.run(loaded.config(), referenceCheck, mtls);
    if (checks.rejected()) {
      err.println("meridian: config rejected (" + checks.rejectedBy("--mtls")
          + "), serve would refuse it:");
      checks.rejections().forEach(f -> err.println("  " + f));
      return 2;
    }
    // With --profile grpc, the profile's own report below lists every grpc finding once.
    List<ConfigChecks.Finding> warnings = checks.warnings().stream()
        .filter(f -> profile == null || f.check() != ConfigChecks.Check.GRPC_PROFILE).toList();
    int warned = listing.warnings().size() + warnings.size();
    out.printf("%s: valid: %d resources in %d group(s)%s%n", config, loaded.resources(),
        loaded.groups() + 1, warned == 0 ? "" : ", " + warned + " warning(s)");
    if (Files.isDirectory(config)) {
      // A directory's files are named, so a file that is not read is never a surprise.
      out.println("read: " + (loaded.files().isEmpty() ? "no .yaml, .yml or .json file"
          : names(loaded.files())));
      if (!listing.ignored().isEmpty()) {
        out.println("not read: " + names(listing.ignored()) + " (not .yaml, .yml or .json)");
      }
    }
    listing.warnings().forEach(w -> out.println("warning: " + w));
    warnings.forEach(f -> out.println("warning: " + f));
    if (profile == null) {
      return 0;
    }
    List<GrpcProfile.Finding> findings = GrpcProfile.check(loaded.config());
    long errors = findings.stream().filter(f -> f.severity() == GrpcProfile.Severity.ERROR).count();
    findings.forEach(out::println);
    out.printf("grpc profile: %d error(s), %d warning(s)%n", errors, findings.size() - errors);
    return errors > 0 ? 1 : 0;
  }

  /** What the config directory holds besides the files read; empty for a file. */
  private ConfigDirectory.Listing listing() {
    try {
      return ConfigDirectory.scan(config);
    } catch (ConfigException e) {
      return new ConfigDirectory.Listing(List.of(), List.of(), List.of());
    }
  }

  /** File names relative to the config directory, comma-separated. */
  private String names(List<Path> files) {
    return String.join(", ",
        files.stream().map(f -> ConfigDirectory.relative(config, f).toString()).toList());
  }
}
