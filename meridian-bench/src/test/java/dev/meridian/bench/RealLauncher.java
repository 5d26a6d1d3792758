package dev.meridian.bench;

import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;

/**
 * The repository's real {@code meridian} launcher and the packaged meridian.jar, run through a
 * wrapper script that puts a stand-in {@code mvn} first on the PATH, so that a test never builds;
 * the process is the real JVM ({@code exec}: the launcher's pid). Tests that use it are skipped
 * where there is no jar, or where the sources are newer than it (the launcher would build first,
 * and the tools that time a start refuse such a run).
 */
final class RealLauncher {
  private RealLauncher() {}

  static Path repo() {
    return Path.of("..").toAbsolutePath().normalize();
  }

  /** A wrapper of {@code ../meridian} in {@code dir}; skips the test where there is no jar. */
  static Path in(Path dir) throws IOException {
    Path launcher = repo().resolve("meridian");
    assumeTrue(Files.isExecutable(Path.of("/bin/bash")), "the launcher is a bash script");
    assumeTrue(Files.exists(repo().resolve("meridian-cli/target/meridian.jar")),
        "meridian.jar is packaged by a reactor build (mvn verify)");
    Path bin = Files.createDirectories(dir.resolve("bin"));
    executable(bin.resolve("mvn"), "exit 0");
    Path wrapper = dir.resolve("meridian");
    executable(wrapper, "PATH=\"" + bin + ":$PATH\" exec /bin/bash \"" + launcher + "\" \"$@\"");
    Process p = new ProcessBuilder(wrapper.toString(), "--version").redirectErrorStream(true)
        .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      p.waitFor(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    assumeFalse(out.contains("meridian: building"), "sources are newer than meridian.jar");
    return wrapper;
  }

  private static void executable(Path p, String body) throws IOException {
    Files.writeString(p, "#!/bin/bash\n" + body + "\n", StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
  }
}
