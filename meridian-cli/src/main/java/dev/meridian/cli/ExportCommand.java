package dev.meridian.cli;

import dev.meridian.internal.config.ConfigException;
import dev.meridian.internal.etcd.EtcdApply;
import dev.meridian.internal.etcd.EtcdCli;
import dev.meridian.internal.etcd.EtcdExport;
import dev.meridian.internal.etcd.EtcdTarget;
import io.etcd.jetcd.Client;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

@Command(name = "export", mixinStandardHelpOptions = true,
    description = {"Print the config stored in etcd in the config file format (docs/etcd.md); "
        + "`meridian apply` of the output changes nothing.",
        "Exit status: 0 printed, 1 etcd failed, 2 the stored config is invalid."})
final class ExportCommand implements Callable<Integer> {
  @Option(names = "--config", required = true, paramLabel = "URL",
      description = "etcd://HOST:PORT[,HOST:PORT...]/PREFIX (etcds:// for TLS).")
  String config;

  @Option(names = {"-o", "--output"}, defaultValue = "yaml", paramLabel = "FORMAT",
      description = "yaml or json (default ${DEFAULT-VALUE}).")
  String output;

  @Mixin EtcdOptions etcd;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws InterruptedException {
    EtcdExport.Format format = switch (output.toLowerCase(java.util.Locale.ROOT)) {
      case "yaml", "yml" -> EtcdExport.Format.YAML;
      case "json" -> EtcdExport.Format.JSON;
      default -> throw new ParameterException(spec.commandLine(),
          "-o must be yaml or json, not '" + output + "'");
    };
    if (!EtcdTarget.isEtcd(config)) {
      throw new ParameterException(spec.commandLine(), "--config must be an etcd:// or etcds:// "
          + "URL");
    }
    EtcdTarget target = etcd.target(spec, config);
    try (Client client = EtcdCli.connect(target)) {
      spec.commandLine().getOut().print(new EtcdExport(client, target).export(format));
      spec.commandLine().getOut().flush();
      return 0;
    } catch (ConfigException e) {
      spec.commandLine().getErr().println("meridian: the stored config is invalid: "
          + e.getMessage());
      return 2;
    } catch (EtcdApply.Failed | java.io.IOException e) {
      spec.commandLine().getErr().println("meridian: " + e.getMessage());
      return 1;
    }
  }
}
