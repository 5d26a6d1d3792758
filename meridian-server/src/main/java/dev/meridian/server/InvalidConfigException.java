package dev.meridian.server;

import java.util.List;

/**
 * A publication refused by {@link Validation#REJECT}: the config in force did not change.
 */
public final class InvalidConfigException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;
  private final List<String> problems;

  InvalidConfigException(List<String> problems) {
    super(String.join("; ", problems));
    this.problems = List.copyOf(problems);
  }

  /** One line per problem, naming the resource. */
  public List<String> problems() {
    return problems;
  }
}
