package dev.meridian.cli;

import dev.meridian.config.ConfigException;
import dev.meridian.config.ConfigLoader;
import dev.meridian.config.GrpcProfile;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "validate", mixinStandardHelpOptions = true,
    description = {"Check a config file or directory as `serve` would load it, without serving.",
        "With --profile grpc, also report what proxyless grpc-java clients and servers would reject "
            + "(ERROR: NACKed) or silently ignore (WARNING), naming the resource and field.",
        "Exit status: 0 valid, 1 grpc-java would reject something, 2 invalid config."})
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

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    ConfigLoader.Loaded loaded;
    try {
      loaded = new ConfigLoader().load(config);
    } catch (ConfigException e) {
      err.println("meridian: invalid config: " + e.getMessage());
      return 2;
    }
    out.printf("%s: valid: %d resources in %d group(s)%n", config, loaded.resources(),
        loaded.groups() + 1);
    if (profile == null) {
      return 0;
    }
    List<GrpcProfile.Finding> findings = GrpcProfile.check(loaded.config());
    long errors = findings.stream().filter(f -> f.severity() == GrpcProfile.Severity.ERROR).count();
    findings.forEach(out::println);
    out.printf("grpc profile: %d error(s), %d warning(s)%n", errors, findings.size() - errors);
    return errors > 0 ? 1 : 0;
  }
}
