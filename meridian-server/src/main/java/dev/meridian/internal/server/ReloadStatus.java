package dev.meridian.internal.server;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The last config load or reload of one hub and the last one that was rejected, for the admin
 * port's {@code /status} and status page (issue 24). Written by whoever puts configs in force (the
 * file watcher, the store's sink, the embedding API's publisher); read by the admin handlers.
 * Per hub: two servers in one JVM keep their own.
 */
public final class ReloadStatus {
  /**
   * One load or reload: when, whether it was served, how many resources changed (served ones
   * only) and why not (rejected ones only; empty otherwise).
   */
  public record Reload(Instant at, boolean ok, int changed, List<String> errors) {
    public Reload {
      errors = List.copyOf(errors);
    }
  }

  private final Clock clock;
  private final AtomicReference<Reload> last = new AtomicReference<>();
  private final AtomicReference<Reload> lastFailure = new AtomicReference<>();

  public ReloadStatus() {
    this(Clock.systemUTC());
  }

  ReloadStatus(Clock clock) {
    this.clock = clock;
  }

  /** A config was put in force; {@code changed} resources changed. */
  public void served(int changed) {
    last.set(new Reload(clock.instant(), true, changed, List.of()));
  }

  /** A config was rejected for {@code errors}; the one before it stays in force. */
  public void rejected(List<String> errors) {
    Reload r = new Reload(clock.instant(), false, 0, errors);
    last.set(r);
    lastFailure.set(r);
  }

  /** The last load or reload, served or rejected; null before the first. */
  public Reload last() {
    return last.get();
  }

  /** The last rejected one; null if none was. */
  public Reload lastFailure() {
    return lastFailure.get();
  }
}
