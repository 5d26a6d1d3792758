package dev.meridian.internal.server;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The last config load or reload of one hub, the last one rejected and the last one held, and
 * the state they leave, for the admin port's {@code /status} and status page (issue 24). Written
 * by whoever puts configs in force (the file watcher, the store's sink, the embedding API's
 * publisher); read by the admin handlers. Per hub: two servers in one JVM keep their own.
 */
public final class ReloadStatus {
  /** What became of a load or reload; {@link #label} is its name in {@code /status}. */
  public enum Result {
    /** Put in force. */
    OK("ok"),
    /** Refused (it does not load, or serve's checks reject it): the last good config stays. */
    FAILED("failed"),
    /** Held: it would empty what is served (serve --allow-emptying applies it). */
    HELD("held"),
    /** After a failure or a hold, the source holds what is served again: nothing to apply. */
    RECOVERED("recovered");

    private final String label;

    Result(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }

  /**
   * One load or reload: when, what became of it, how many resources changed (served ones only),
   * why it was refused (failed ones only), what serve's checks warned about in the config it
   * leaves in force (ok and recovered ones), and what it would have removed (held ones). Lists
   * that do not apply are empty.
   */
  public record Reload(Instant at, Result result, int changed, List<String> errors,
      List<String> warnings, List<String> removes) {
    public Reload {
      errors = List.copyOf(errors);
      warnings = List.copyOf(warnings);
      removes = List.copyOf(removes);
    }

    /** Whether what the source holds is what is served after it. */
    public boolean ok() {
      return result == Result.OK || result == Result.RECOVERED;
    }
  }

  /**
   * Everything at once, so that a reader never sees a reload without the state it left:
   * {@code warnings} are those of the config in force.
   */
  public record View(Reload last, Reload lastFailure, Reload lastHeld, List<String> warnings) {
    /**
     * Whether the config source's content is what is served: {@code OK}, else {@code FAILED} or
     * {@code HELD} (the last good config is served); null before the first load.
     */
    public Result state() {
      return last == null ? null : last.ok() ? Result.OK : last.result;
    }
  }

  private final Clock clock;
  private final AtomicReference<View> view =
      new AtomicReference<>(new View(null, null, null, List.of()));

  public ReloadStatus() {
    this(Clock.systemUTC());
  }

  ReloadStatus(Clock clock) {
    this.clock = clock;
  }

  /**
   * A config was put in force; {@code changed} resources changed, and serve's checks found
   * {@code warnings} in it.
   */
  public synchronized void served(int changed, List<String> warnings) {
    View v = view.get();
    view.set(new View(new Reload(clock.instant(), Result.OK, changed, List.of(), warnings,
        List.of()), v.lastFailure, v.lastHeld, List.copyOf(warnings)));
  }

  /** A config was rejected for {@code errors}; the one before it stays in force. */
  public synchronized void rejected(List<String> errors) {
    View v = view.get();
    Reload r = new Reload(clock.instant(), Result.FAILED, 0, errors, List.of(), List.of());
    view.set(new View(r, r, v.lastHeld, v.warnings));
  }

  /** A config was held: it would remove {@code removes}; the one before it stays in force. */
  public synchronized void held(List<String> removes) {
    View v = view.get();
    Reload r = new Reload(clock.instant(), Result.HELD, 0, List.of(), List.of(), removes);
    view.set(new View(r, v.lastFailure, r, v.warnings));
  }

  /** After a failure or a hold, the source holds the config in force again. */
  public synchronized void recovered() {
    View v = view.get();
    view.set(new View(new Reload(clock.instant(), Result.RECOVERED, 0, List.of(), v.warnings,
        List.of()), v.lastFailure, v.lastHeld, v.warnings));
  }

  /** The last load or reload, whatever became of it; null before the first. */
  public Reload last() {
    return view.get().last;
  }

  /** The last rejected one; null if none was. */
  public Reload lastFailure() {
    return view.get().lastFailure;
  }

  /** The last held one; null if none was. */
  public Reload lastHeld() {
    return view.get().lastHeld;
  }

  /** See {@link View#state}. */
  public Result state() {
    return view.get().state();
  }

  /** All of it, read at once. */
  public View view() {
    return view.get();
  }

  /** What serve's checks warned about in the config in force; empty if nothing. */
  public List<String> warnings() {
    return view.get().warnings;
  }
}
