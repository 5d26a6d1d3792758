package dev.meridian.internal.config;

import java.util.List;

/**
 * A config that cannot be served; the message names every problem with file, line and field. A
 * {@link ConfigHeld} is one that could be served but is held: it would empty what is served.
 */
public sealed class ConfigException extends Exception permits ConfigHeld {
  private final List<String> problems;

  public ConfigException(List<String> problems) {
    super(problems.size() == 1 ? problems.get(0)
        : problems.size() + " problems:\n  " + String.join("\n  ", problems));
    this.problems = List.copyOf(problems);
  }

  public ConfigException(String problem) {
    this(List.of(problem));
  }

  public List<String> problems() {
    return problems;
  }
}
