package dev.meridian.server;

import java.util.List;

/**
 * A publication refused: a resource breaks one of Envoy's rules ({@link RuleSet#ENVOY}), a
 * reference dangles under {@link Validation#REJECT}, or key material sits outside a Secret under
 * mTLS. The config in force did not change; {@link #problems()} names every problem.
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
