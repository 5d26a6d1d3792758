package dev.meridian.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** CPU time and memory of a process, from Linux {@code /proc/<pid>/stat} and {@code status}. */
public final class ProcStats {
  /** USER_HZ: clock ticks per second of /proc/<pid>/stat; 100 on every mainstream Linux. */
  static final long TICKS_PER_SECOND = 100;

  private ProcStats() {}

  /** utime + stime in seconds, from the text of /proc/<pid>/stat. */
  public static double cpuSeconds(String stat) {
    // The command (field 2) is in parentheses and may contain spaces: split after the last ')'.
    String rest = stat.substring(stat.lastIndexOf(')') + 2);
    String[] f = rest.trim().split("\\s+");
    // rest starts at field 3 (state): utime is field 14, stime field 15.
    long utime = Long.parseLong(f[14 - 3]);
    long stime = Long.parseLong(f[15 - 3]);
    return (utime + stime) / (double) TICKS_PER_SECOND;
  }

  /** A "VmRSS:   1234 kB" style field of /proc/<pid>/status, in bytes; -1 if absent. */
  public static long statusBytes(List<String> status, String field) {
    for (String line : status) {
      if (line.startsWith(field + ":")) {
        String[] f = line.substring(field.length() + 1).trim().split("\\s+");
        long v = Long.parseLong(f[0]);
        return f.length > 1 && f[1].equalsIgnoreCase("kB") ? v * 1024 : v;
      }
    }
    return -1;
  }

  public static double cpuSeconds(long pid) {
    try {
      return cpuSeconds(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
    } catch (IOException e) {
      return Double.NaN;
    }
  }

  /** Current resident set (VmRSS) in bytes. */
  public static long rss(long pid) {
    return status(pid, "VmRSS");
  }

  /** Peak resident set since the process started (VmHWM) in bytes. */
  public static long peakRss(long pid) {
    return status(pid, "VmHWM");
  }

  private static long status(long pid, String field) {
    try {
      return statusBytes(Files.readAllLines(Path.of("/proc", Long.toString(pid), "status")), field);
    } catch (IOException e) {
      return -1;
    }
  }
}
