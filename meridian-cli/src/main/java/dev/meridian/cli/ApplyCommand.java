package dev.meridian.cli;

import dev.meridian.internal.config.ConfigException;
import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.config.ReferenceCheck;
import dev.meridian.internal.config.RuleCheck;
import dev.meridian.internal.etcd.EtcdApply;
import dev.meridian.internal.etcd.EtcdCli;
import dev.meridian.internal.etcd.EtcdTarget;
import io.etcd.jetcd.Client;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

@Command(name = "apply", mixinStandardHelpOptions = true,
    description = {"Make the config stored in etcd what the files say, in one etcd transaction "
        + "(docs/etcd.md). The files are validated as `serve` would load them, and so is the "
        + "stored config that would result; on any problem nothing is written.",
        "Prints one line per resource, then the counts.",
        "Exit status: 0 applied (or nothing to change), 1 etcd failed or concurrent writers kept "
            + "winning (nothing written), 2 invalid files, resulting config or TLS files, or an "
            + "emptying without --allow-empty (nothing written)."})
final class ApplyCommand implements Callable<Integer> {
  @Option(names = "--config", required = true, paramLabel = "URL",
      description = "etcd://HOST:PORT[,HOST:PORT...]/PREFIX (etcds:// for TLS).")
  String config;

  @Option(names = {"-f", "--filename"}, required = true, paramLabel = "FILE_OR_DIR",
      description = "A config file, or a directory of .yaml/.yml/.json config files.")
  Path files;

  @Option(names = "--prune", description = "Also delete stored resources and groups the files "
      + "do not have.")
  boolean prune;

  @Option(names = "--dry-run", description = "Print what would change; write nothing.")
  boolean dryRun;

  @Option(names = "--allow-empty", description = "Write even a result that leaves the stored "
      + "config, or a type within a group, with no resources (with --prune). Default: such an "
      + "apply is refused, exit 2, nothing written. Replicas hold such a config unless they run "
      + "serve --allow-emptying.")
  boolean allowEmpty;

  @Option(names = "--reference-check", defaultValue = "reject", paramLabel = "MODE",
      converter = Choice.ReferenceChecks.class, completionCandidates = Choice.ReferenceChecks.class,
      description = "Dangling references in the resulting config: ${COMPLETION-CANDIDATES} "
          + "(default ${DEFAULT-VALUE}: nothing is written; warn: written, with warnings).")
  ReferenceCheck referenceCheck;

  @Option(names = "--validation", defaultValue = "envoy", paramLabel = "RULES",
      converter = Choice.RuleChecks.class, completionCandidates = Choice.RuleChecks.class,
      description = "As `serve --validation`: check the files and the resulting stored config "
          + "against the rules Envoy checks (${COMPLETION-CANDIDATES}; default ${DEFAULT-VALUE}: "
          + "a broken rule writes nothing, exit 2).")
  RuleCheck ruleCheck;

  @Mixin EtcdOptions etcd;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws InterruptedException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (!EtcdTarget.isEtcd(config)) {
      throw new ParameterException(spec.commandLine(), "--config must be an etcd:// or etcds:// "
          + "URL; to check files without etcd use `meridian validate --config " + config + "`");
    }
    EtcdTarget target = etcd.target(spec, config);
    try (Client client = EtcdCli.connect(target)) {
      ConfigLoader.Loaded loaded;
      try {
        loaded = new ConfigLoader(ruleCheck).load(files);
      } catch (ConfigException e) {
        err.println("meridian: invalid config, nothing written: " + e.getMessage());
        return 2;
      }
      EtcdApply.Result r = new EtcdApply(client, target, ruleCheck).apply(loaded.config(), prune,
          dryRun, referenceCheck, allowEmpty);
      for (EtcdApply.Change c : r.changes()) {
        out.printf("%-9s %s%n", c.kind().name().toLowerCase(java.util.Locale.ROOT), c.what());
      }
      r.warnings().forEach(w -> out.println("warning: " + w));
      out.printf("%d created, %d updated, %d deleted, %d unchanged%s%n",
          r.count(EtcdApply.Kind.CREATED), r.count(EtcdApply.Kind.UPDATED),
          r.count(EtcdApply.Kind.DELETED), r.count(EtcdApply.Kind.UNCHANGED),
          dryRun ? " (dry run: nothing written)"
              : r.written() ? " (one transaction, revision " + r.revision() + ")" : "");
      return 0;
    } catch (EtcdApply.Invalid e) {
      err.println("meridian: the config would be invalid, nothing written:");
      e.problems().forEach(p -> err.println("  " + p));
      return 2;
    } catch (EtcdApply.WouldEmpty e) {
      err.println("meridian: the apply would empty what is stored, nothing written "
          + "(--allow-empty writes it):");
      e.removes().forEach(p -> err.println("  " + p));
      return 2;
    } catch (EtcdApply.Failed e) {
      err.println("meridian: " + e.getMessage());
      return 1;
    } catch (java.io.IOException e) {
      err.println("meridian: " + e.getMessage()); // the TLS files: a usage problem, as for serve
      return 2;
    } catch (RuntimeException e) {
      err.println("meridian: apply failed, nothing written: " + e);
      return 1;
    }
  }
}
