package dev.meridian.server;

import java.util.List;

/**
 * What one {@link Publisher} call put in force.
 *
 * @param changed how many resources (across groups) differ from before by content: 0 means no
 *     client is sent anything
 * @param warnings what {@link Validation#WARN} or {@link Validation#REJECT} found and let pass
 */
public record Publication(int changed, List<String> warnings) {
  public Publication {
    warnings = List.copyOf(warnings);
  }
}
