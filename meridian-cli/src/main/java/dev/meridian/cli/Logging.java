package dev.meridian.cli;

import java.time.Instant;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The CLI's logging backend: Meridian's libraries log through SLF4J, routed here to
 * java.util.logging (slf4j-jdk14), one line per event on stderr, as text (time, level, logger,
 * message) or as one JSON object per line ({@code serve --log-format json}).
 */
final class Logging {
  private Logging() {}

  /** {@code --log-format}. */
  enum Format {
    TEXT, JSON
  }

  /**
   * Loggers whose level was set: held here, since java.util.logging keeps loggers only weakly and
   * a collected logger would forget its level.
   */
  private static final java.util.Map<String, Logger> HELD =
      new java.util.concurrent.ConcurrentHashMap<>();

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
    configure(level, Format.TEXT);
  }

  /**
   * For the client commands (get, watch, resolve, status), which say in one line of their own why
   * a server could not be reached: the gRPC library's warnings about the same failure (an
   * unknown host's comes with a stack trace) are shown only with {@code --log-level debug}.
   */
  static void configureClient(Level level) {
    configure(level, Format.TEXT);
    java.util.logging.Level libraries = level == Level.DEBUG ? java.util.logging.Level.WARNING
        : java.util.logging.Level.OFF;
    hold("io.grpc").setLevel(libraries); // grpc-netty-shaded's Netty logs under io.grpc too
    hold("io.netty").setLevel(libraries);
  }

  static void configure(Level level, Format format) {
    java.util.logging.Level meridian = level.jul;
    Logger root = Logger.getLogger("");
    for (Handler h : root.getHandlers()) {
      root.removeHandler(h);
    }
    // ConsoleHandler writes to System.err; StreamHandler would close it when replaced.
    Handler h = new ConsoleHandler();
    h.setLevel(java.util.logging.Level.ALL);
    h.setFormatter(format == Format.JSON ? new JsonFormatter() : new Formatter() {
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
    hold("").setLevel(java.util.logging.Level.WARNING);
    hold("dev.meridian").setLevel(meridian);
  }

  private static Logger hold(String name) {
    return HELD.computeIfAbsent(name, Logger::getLogger);
  }

  /**
   * One JSON object per line: {@code time}, {@code level}, {@code logger}, then a structured
   * event's own keys ({@code event} and its pairs, as in the text format), else {@code message};
   * {@code error} holds a stack trace.
   */
  static final class JsonFormatter extends Formatter {
    @Override
    public String format(LogRecord r) {
      com.google.gson.JsonObject o = new com.google.gson.JsonObject();
      o.addProperty("time", Instant.ofEpochMilli(r.getMillis()).toString());
      o.addProperty("level", name(r.getLevel()));
      o.addProperty("logger", r.getLoggerName());
      String message = formatMessage(r);
      java.util.Map<String, String> pairs = dev.meridian.internal.protocol.LogLine.parse(message);
      if (pairs == null) {
        o.addProperty("message", message);
      } else {
        pairs.forEach((k, v) -> {
          if (!o.has(k)) { // the record's own time, level and logger win over a pair's
            o.addProperty(k, v);
          }
        });
      }
      if (r.getThrown() != null) {
        java.io.StringWriter sw = new java.io.StringWriter();
        r.getThrown().printStackTrace(new java.io.PrintWriter(sw));
        o.addProperty("error", sw.toString());
      }
      return o + "\n";
    }
  }

  /** {@code /logging} on the admin port, over java.util.logging. */
  static final class JulLevels implements dev.meridian.internal.server.LogLevels {
    @Override
    public java.util.Map<String, String> levels() {
      java.util.Map<String, String> out = new java.util.TreeMap<>();
      HELD.forEach((name, logger) -> {
        if (logger.getLevel() != null) {
          out.put(name, name(logger.getLevel()).toLowerCase(java.util.Locale.ROOT));
        }
      });
      return out;
    }

    @Override
    public void set(String logger, String level) {
      if (!LOGGERS.contains(logger)) {
        // java.util.logging keeps every logger it is asked for: an unknown name is refused.
        throw new IllegalArgumentException("unknown logger '" + logger + "': use one of "
            + String.join(", ", LOGGERS));
      }
      Level l;
      try {
        l = Level.valueOf(level.trim().toUpperCase(java.util.Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("unknown level '" + level
            + "': use debug, info, warn or error");
      }
      hold(logger).setLevel(l.jul);
    }
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
