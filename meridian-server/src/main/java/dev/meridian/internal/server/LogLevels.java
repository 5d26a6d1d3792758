package dev.meridian.internal.server;

import java.util.Map;

/**
 * Log levels changed at runtime through the admin port ({@code /logging}). Logging goes through
 * SLF4J, whose backend is the application's: the CLI gives one over java.util.logging; without
 * one the endpoint says the levels are not Meridian's to change.
 */
public interface LogLevels {
  /** The levels set, by logger name ({@code ""} is the root), in the CLI's spelling. */
  Map<String, String> levels();

  /**
   * Sets {@code logger}'s level: {@code debug}, {@code info}, {@code warn} or {@code error}.
   *
   * @throws IllegalArgumentException for another level, saying which are allowed
   */
  void set(String logger, String level);
}
