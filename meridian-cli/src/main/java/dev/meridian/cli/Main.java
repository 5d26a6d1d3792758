package dev.meridian.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code meridian} command. */
@Command(name = "meridian", mixinStandardHelpOptions = true, version = "meridian 0.1.0",
    description = "xDS control plane and toolkit.",
    subcommands = {ServeCommand.class, GetCommand.class, WatchCommand.class, ResolveCommand.class,
        StatusCommand.class, BootstrapCommand.class, ValidateCommand.class})
public final class Main {
  public static void main(String[] args) {
    System.exit(run(args));
  }

  public static int run(String... args) {
    return new CommandLine(new Main()).execute(args);
  }
}
