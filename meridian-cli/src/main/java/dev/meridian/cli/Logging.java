package dev.meridian.cli;

import java.time.Instant;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** One line per event on stderr: time, level, logger, message. */
final class Logging {
  private Logging() {}

  /** {@code --log-level}: anything else is a usage error ({@link Choice.LogLevels}). */
  enum Level {
    DEBUG(java.util.logging.Level.FINE),
    INFO(java.util.logging.Level.INFO),
    WARN(java.util.logging.Level.WARNING),
    ERROR(java.util.logging.Level.SEVERE);

    final java.util.logging.Level jul;

    Level(java.util.logging.Level jul) {
      this.jul = jul;
    }
  }

  static void configure(Level level) {
    java.util.logging.Level meridian = level.jul;
    Logger root = Logger.getLogger("");
    for (Handler h : root.getHandlers()) {
      root.removeHandler(h);
    }
    // ConsoleHandler writes to System.err; StreamHandler would close it when replaced.
    Handler h = new ConsoleHandler();
    h.setLevel(java.util.logging.Level.ALL);
    h.setFormatter(new Formatter() {
      @Override
      public String format(LogRecord r) {
        StringBuilder sb = new StringBuilder();
        sb.append(Instant.ofEpochMilli(r.getMillis())).append(' ')
            .append(name(r.getLevel())).append(' ')
            .append(r.getLoggerName()).append(": ")
            .append(formatMessage(r)).append('\n');
        if (r.getThrown() != null) {
          java.io.StringWriter sw = new java.io.StringWriter();
          r.getThrown().printStackTrace(new java.io.PrintWriter(sw));
          sb.append(sw);
        }
        return sb.toString();
      }
    });
    root.addHandler(h);
    root.setLevel(java.util.logging.Level.WARNING);
    Logger.getLogger("dev.meridian").setLevel(meridian);
  }

  private static String name(java.util.logging.Level l) {
    if (l.intValue() >= java.util.logging.Level.SEVERE.intValue()) {
      return "ERROR";
    } else if (l.intValue() >= java.util.logging.Level.WARNING.intValue()) {
      return "WARN";
    } else if (l.intValue() >= java.util.logging.Level.INFO.intValue()) {
      return "INFO";
    }
    return "DEBUG";
  }
}
