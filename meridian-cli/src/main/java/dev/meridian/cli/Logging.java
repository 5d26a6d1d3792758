package dev.meridian.cli;

import java.time.Instant;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** One line per event on stderr: time, level, logger, message. */
final class Logging {
  private Logging() {}

  static void configure(String level) {
    Level meridian = switch (level.toLowerCase(java.util.Locale.ROOT)) {
      case "debug" -> Level.FINE;
      case "warn", "warning" -> Level.WARNING;
      case "error" -> Level.SEVERE;
      default -> Level.INFO;
    };
    Logger root = Logger.getLogger("");
    for (Handler h : root.getHandlers()) {
      root.removeHandler(h);
    }
    // ConsoleHandler writes to System.err; StreamHandler would close it when replaced.
    Handler h = new ConsoleHandler();
    h.setLevel(Level.ALL);
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
    root.setLevel(Level.WARNING);
    Logger.getLogger("dev.meridian").setLevel(meridian);
  }

  private static String name(Level l) {
    if (l.intValue() >= Level.SEVERE.intValue()) {
      return "ERROR";
    } else if (l.intValue() >= Level.WARNING.intValue()) {
      return "WARN";
    } else if (l.intValue() >= Level.INFO.intValue()) {
      return "INFO";
    }
    return "DEBUG";
  }
}
