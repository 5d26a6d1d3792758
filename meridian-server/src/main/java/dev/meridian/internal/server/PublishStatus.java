package dev.meridian.internal.server;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The last publish of {@code --publish-dir} files, for the admin port's {@code /status} and status
 * page: a publish that failed leaves the files of an older config on disk while xDS serves the new
 * one, so it is shown, not only logged. Per hub, like {@link ReloadStatus}.
 */
public final class PublishStatus {
  /** One publish: when, to which directory, whether every file is current, and why not. */
  public record Publish(Instant at, String dir, boolean ok, List<String> errors) {
    public Publish {
      errors = List.copyOf(errors);
    }
  }

  private final Clock clock;
  private final AtomicReference<Publish> last = new AtomicReference<>();

  public PublishStatus() {
    this(Clock.systemUTC());
  }

  PublishStatus(Clock clock) {
    this.clock = clock;
  }

  void published(String dir, List<String> errors) {
    last.set(new Publish(clock.instant(), dir, errors.isEmpty(), errors));
  }

  /** The last publish; null without {@code --publish-dir} or before the first. */
  public Publish last() {
    return last.get();
  }
}
