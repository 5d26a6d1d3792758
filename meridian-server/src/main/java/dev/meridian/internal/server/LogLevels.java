package dev.meridian.internal.server;

import java.util.Map;

/**
 * Log levels changed at runtime through the admin port ({@code /logging}). Logging goes through
 * SLF4J, whose backend is the application's: the CLI gives one over java.util.logging; without
 * one the endpoint says the levels are not Meridian's to change.
 */
public interface LogLevels {
  /**
   * The loggers {@code /logging} may set: {@code dev.meridian} and the loggers under it that
   * Meridian's code logs to, and the roots of the libraries whose logs explain a connection
   * (grpc-java, Netty, jetcd). Any other name is refused before it reaches the backend, which
   * would keep a logger for each name it was given for as long as the process runs.
   */
  java.util.List<String> LOGGERS = java.util.List.of(
      "dev.meridian",
      "dev.meridian.client",
      "dev.meridian.client.FileXdsTransport",
      "dev.meridian.config",
      "dev.meridian.config.ConfigWatcher",
      "dev.meridian.etcd",
      "dev.meridian.etcd.EtcdConfigSource",
      "dev.meridian.server",
      "dev.meridian.server.SerialExecutor",
      "dev.meridian.server.publish",
      "dev.meridian.server.xds",
      "io.etcd",
      "io.grpc",
      "io.netty");

  /** The levels set, by logger name ({@code ""} is the root), in the CLI's spelling. */
  Map<String, String> levels();

  /**
   * Sets {@code logger}'s level: {@code debug}, {@code info}, {@code warn} or {@code error}.
   *
   * @throws IllegalArgumentException for another level, or a logger not in {@link #LOGGERS},
   *     saying which are allowed
   */
  void set(String logger, String level);
}
