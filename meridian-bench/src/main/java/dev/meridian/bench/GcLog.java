package dev.meridian.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Stop-the-world pauses from a {@code -Xlog:gc} file: lines like {@code Pause Young ... 12.345ms}. */
public final class GcLog {
  private static final Pattern PAUSE = Pattern.compile("\\bPause\\b.*?([0-9]+(?:\\.[0-9]+)?)ms\\s*$");

  /** Pauses: how many, their total and the longest, in milliseconds. */
  public record Pauses(int count, double totalMs, double maxMs) {
    @Override
    public String toString() {
      return String.format("%d pauses, total %.0f ms, max %.0f ms", count, totalMs, maxMs);
    }
  }

  private GcLog() {}

  public static Pauses summarize(List<String> lines) {
    int n = 0;
    double total = 0;
    double max = 0;
    for (String line : lines) {
      Matcher m = PAUSE.matcher(line);
      if (m.find()) {
        double ms = Double.parseDouble(m.group(1));
        n++;
        total += ms;
        max = Math.max(max, ms);
      }
    }
    return new Pauses(n, total, max);
  }

  private static final Pattern FULL = Pattern.compile("Pause Full.*?->([0-9]+)M\\(");

  /** Heap after the last full GC in {@code lines}, in MiB; -1 if none. */
  public static long heapAfterLastFullGcMiB(List<String> lines) {
    long v = -1;
    for (String line : lines) {
      Matcher m = FULL.matcher(line);
      if (m.find()) {
        v = Long.parseLong(m.group(1));
      }
    }
    return v;
  }

  /** The log's lines (empty if it does not exist yet). */
  public static List<String> lines(Path file) {
    try {
      return Files.exists(file) ? Files.readAllLines(file) : List.of();
    } catch (IOException e) {
      return List.of();
    }
  }
}
