package dev.meridian.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Figures measured by the end-to-end tests, printed and appended to
 * {@code target/e2e-measurements.txt} so that docs/grpc-e2e.md can quote a run.
 */
final class Measurements {
  private static final Path FILE = Path.of("target", "e2e-measurements.txt");

  private Measurements() {}

  static void record(String what, long nanos) {
    note(what + ": " + (nanos / 1_000_000) + " ms");
  }

  static synchronized void note(String line) {
    System.out.println("[e2e] " + line);
    try {
      Files.createDirectories(FILE.getParent());
      Files.writeString(FILE, line + System.lineSeparator(), StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
