package dev.meridian.cli;

import java.io.PrintStream;
import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code meridian completion bash|zsh}: a shell completion script on stdout (issue 24), generated
 * by picocli from the command tree, so it knows every subcommand, option and option value.
 * {@code source <(meridian completion bash)}. zsh runs the same script through bashcompinit, which
 * the script loads itself.
 */
@Command(name = "completion", mixinStandardHelpOptions = true,
    description = "Print a shell completion script: source <(meridian completion bash).")
final class CompletionCommand implements Callable<Integer> {
  enum Shell { BASH, ZSH }

  static final class Shells extends Choice<Shell> {
    Shells() {
      super(Shell.class);
    }
  }

  @Spec
  CommandSpec spec;

  @Parameters(paramLabel = "SHELL", converter = Shells.class, completionCandidates = Shells.class,
      description = "${COMPLETION-CANDIDATES}")
  Shell shell;

  private final PrintStream out;

  CompletionCommand() {
    this(System.out);
  }

  CompletionCommand(PrintStream out) {
    this.out = out;
  }

  @Override
  public Integer call() {
    String script = AutoComplete.bash("meridian", spec.root().commandLine());
    if (shell == Shell.ZSH) {
      // picocli's script is bash; under zsh it loads compinit and bashcompinit itself (when not
      // loaded yet) and runs through zsh's bash completion emulation.
      out.println("# meridian completion for zsh: source <(meridian completion zsh)");
    }
    out.print(script);
    out.flush();
    return 0;
  }
}
