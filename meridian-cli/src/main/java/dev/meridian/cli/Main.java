package dev.meridian.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code meridian} command. */
@Command(name = "meridian", mixinStandardHelpOptions = true,
    versionProvider = VersionCommand.Provider.class,
    description = "xDS control plane and toolkit.",
    subcommands = {ServeCommand.class, GetCommand.class, WatchCommand.class, ResolveCommand.class,
        StatusCommand.class, BootstrapCommand.class, ValidateCommand.class, ApplyCommand.class,
        ExportCommand.class, VersionCommand.class, CompletionCommand.class})
public final class Main {
  /** Netty's switch for direct buffers it allocates itself (relocated with grpc-netty-shaded). */
  static final String NETTY_REFLECTION = "io.grpc.netty.shaded.io.netty.tryReflectionSetAccessible";
  /** Netty's switch for its Java Flight Recorder events (relocated likewise). */
  static final String NETTY_JFR = "io.grpc.netty.shaded.io.netty.jfr.enabled";

  public static void main(String[] args) {
    preferUnzeroedDirectBuffers();
    noNettyJfrEvents();
    System.exit(run(args));
  }

  /**
   * Lets Netty allocate its pooled direct memory itself instead of through
   * {@code ByteBuffer.allocateDirect}, which zeroes every new chunk: at a 1,000-client connect
   * the pool grows by gigabytes of framed responses, and that zeroing was a tenth of the server's
   * CPU (docs/benchmarks.md, round 6). It takes effect only where {@code java.nio} is open to
   * Netty: meridian.jar's manifest opens it ({@code Add-Opens}) for {@code java -jar}; other
   * launches add {@code --add-opens java.base/java.nio=ALL-UNNAMED}, or keep Netty's default. A
   * value the user set is kept.
   */
  static void preferUnzeroedDirectBuffers() {
    if (System.getProperty(NETTY_REFLECTION) == null) {
      System.setProperty(NETTY_REFLECTION, "true");
    }
  }

  /**
   * Netty's pooled allocator asks Java Flight Recorder whether its allocation events are enabled
   * when it allocates its first chunk, at the first connection: that initializes JFR, 0.2-0.3 s
   * of a start on 2 cores before the first response (issue 18). Meridian does not use those
   * events. A value the user set is kept ({@code true} to record them).
   */
  static void noNettyJfrEvents() {
    if (System.getProperty(NETTY_JFR) == null) {
      System.setProperty(NETTY_JFR, "false");
    }
  }

  public static int run(String... args) {
    return commandLine().execute(args);
  }

  /** The {@code meridian} command line, with its error handling. */
  static CommandLine commandLine() {
    return commandLine(CommandLine.defaultFactory());
  }

  /** The same, with the subcommands made by {@code factory} (tests: their output streams). */
  static CommandLine commandLine(CommandLine.IFactory factory) {
    return new CommandLine(new Main(), factory).setParameterExceptionHandler(Main::badArguments);
  }

  /**
   * A bad option or value: the one-line error, picocli's suggestions for a misspelt option, and
   * where to find the usage; the whole usage would bury the error (issue 18).
   */
  static int badArguments(CommandLine.ParameterException e, String[] args) {
    CommandLine cmd = e.getCommandLine();
    PrintWriter err = cmd.getErr();
    String name = cmd.getCommandSpec().qualifiedName();
    err.println(name + ": " + e.getMessage());
    CommandLine.UnmatchedArgumentException.printSuggestions(e, err);
    err.println("Try '" + name + " --help' for usage.");
    err.flush();
    return cmd.getCommandSpec().exitCodeOnInvalidInput();
  }
}
