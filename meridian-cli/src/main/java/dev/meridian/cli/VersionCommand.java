package dev.meridian.cli;

import dev.meridian.internal.server.BuildInfo;
import java.io.PrintStream;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code meridian version}: the build's version and git commit (issue 24), the same as
 * {@code meridian --version} and the admin port's {@code GET /version}: all three read
 * {@link BuildInfo}, written at build time, so they cannot drift from the pom.
 */
@Command(name = "version", mixinStandardHelpOptions = true,
    description = "Print Meridian's version and the git commit it was built from.")
final class VersionCommand implements Callable<Integer> {
  @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", converter = Formats.class,
      completionCandidates = Formats.class,
      description = "json: the JSON object GET /version serves. Default: two lines of text.")
  Format output;

  enum Format { JSON }

  static final class Formats extends Choice<Format> {
    Formats() {
      super(Format.class);
    }
  }

  private final PrintStream out;

  VersionCommand() {
    this(System.out);
  }

  VersionCommand(PrintStream out) {
    this.out = out;
  }

  @Override
  public Integer call() {
    BuildInfo b = BuildInfo.current();
    if (output == Format.JSON) {
      out.println(b.json());
    } else {
      for (String line : lines(b)) {
        out.println(line);
      }
    }
    out.flush();
    return 0;
  }

  static String[] lines(BuildInfo b) {
    return new String[] {"meridian " + b.version(), "commit " + b.commit()};
  }

  /** {@code meridian --version}: the same lines. */
  static final class Provider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return lines(BuildInfo.current());
    }
  }
}
