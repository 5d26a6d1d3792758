package dev.meridian.internal.config;

import dev.meridian.internal.protocol.LogLine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Watches a config file or directory and reloads it when its content changes. Uses the platform's
 * file notifications (inotify on Linux) and, as a fallback for file systems without them, checks
 * file stamps every {@code pollInterval}.
 *
 * <p>Only stable bytes are applied (issue 18 §2): a file rewritten in place (truncate, then write)
 * is empty or half-written for a while, and a half-written YAML file is often valid. So after
 * reading, the watcher waits a quiet period and reads again; it applies the bytes only if the
 * files' stamps and digest did not move in between, else it waits again for the new bytes. The
 * quiet period is {@link #QUIET_IN_PLACE_NANOS} when a config file was written under its name, and
 * {@link #QUIET_RENAMED_NANOS} when every changed file is a new one put there whole (an atomic
 * rename, a symlink swap): a reload by rename stays as fast as before. A reload that would leave a
 * type, the whole config or a file with nothing ({@link Emptying}) is judged only once the files
 * have been stable for {@link #EMPTYING_NANOS}, so a truncate-then-write is never even considered;
 * then it is held ({@link ConfigHeld}) unless the {@link Emptying.Guard} allows it, and applied
 * with a warning naming what it removes if it does. Identical content is never reloaded. A failed
 * load, a held emptying, or a config the caller's {@link Applier} rejects, is reported once per
 * content and the last good config stays in force (the caller simply keeps serving it); files
 * that return to the served content after that are reported as recovered.
 *
 * <p>A read that failed (a file not readable, a directory not listable) is tried again on every
 * poll until one succeeds, stamps or not: a {@code chmod} that makes a file readable changes
 * neither its content nor its modification time.
 */
public final class ConfigWatcher implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.config.ConfigWatcher");
  /**
   * How long bytes written in place must stay the same before they are applied: far above the
   * gaps of a writer that writes in pieces (20 ms apart, delayed by a loaded machine), and short
   * enough that such an edit still reloads well within a second.
   */
  static final long QUIET_IN_PLACE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
  /** The same for files that were renamed into place: only a burst of renames to let settle. */
  static final long QUIET_RENAMED_NANOS = TimeUnit.MILLISECONDS.toNanos(15);
  /** How long the files must be stable before a reload that empties something is judged. */
  static final long EMPTYING_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** {@link #check}: no check is due; wait for a file event or the poll interval. */
  static final long IDLE = Long.MAX_VALUE;

  private final Path path;
  private final boolean directory;
  private final ConfigLoader loader;
  private final Applier onLoad;
  private final Reports reports;
  /** Who judges emptyings; set before {@link #start}. */
  private Emptying.Guard guard = Emptying.Guard.HOLD;
  private final long pollMillis;
  private final LongSupplier ticker;
  private final Reader reader;
  private final WatchService watchService;
  private final Thread thread;
  private volatile boolean closed;
  /** The files' stamps when the last change was settled (applied, identical or reported). */
  private Stamp lastStamp = Stamp.NONE;
  private ConfigLoader.Loaded applied;
  private Set<Path> appliedFilled = Set.of();
  private byte[] appliedDigest = new byte[0];
  /**
   * The digest of the failed or held content last reported: reported once, not on every stamp
   * change; empty when what the files hold is served.
   */
  private byte[] reportedDigest = new byte[0];
  /** The files as last read: the next read reads only the files changed since. */
  private ConfigLoader.Contents lastRead;
  /** Bytes read but not yet stable long enough to apply; null when nothing changed. */
  private Pending pending;
  /** A config file was written under its name since the last settled change. */
  private boolean writtenInPlace;
  /** The last settled read could not read every file: read again until it can. */
  private boolean readFailed;

  /** How the files are read: {@link ConfigLoader#read(Path, ConfigLoader.Contents)}. */
  @FunctionalInterface
  interface Reader {
    ConfigLoader.Contents read(Path path, ConfigLoader.Contents previous) throws ConfigException;
  }

  /** Puts a loaded config in force, or rejects it by throwing: the last good config stays. */
  @FunctionalInterface
  public interface Applier {
    void apply(ConfigLoader.Loaded loaded) throws ConfigException;
  }

  /** What the watcher reports besides the configs it applies; called on its thread. */
  @FunctionalInterface
  public interface Reports {
    /**
     * The files hold what is not served: a load that failed, a config the applier rejected, or
     * an emptying held ({@link ConfigHeld}). Once per content; the last good config stays.
     */
    void failed(ConfigException problems);

    /** After a failure or a hold was reported, the files hold what is served again. */
    default void recovered() {}
  }

  public ConfigWatcher(Path path, ConfigLoader loader, Applier onLoad, Reports reports,
      long pollMillis) throws IOException {
    this(path, loader, onLoad, reports, pollMillis, System::nanoTime);
  }

  /** As above, with the time source the stability checks read (tests drive {@link #check}). */
  ConfigWatcher(Path path, ConfigLoader loader, Applier onLoad, Reports reports, long pollMillis,
      LongSupplier ticker) throws IOException {
    this(path, loader, onLoad, reports, pollMillis, ticker, ConfigLoader::read);
  }

  /**
   * As above, reading through {@code reader}: tests make a read fail as the platform would for a
   * process that may not read the file, which a test run as root cannot make it do.
   */
  ConfigWatcher(Path path, ConfigLoader loader, Applier onLoad, Reports reports, long pollMillis,
      LongSupplier ticker, Reader reader) throws IOException {
    this.reader = reader;
    this.path = path.toAbsolutePath();
    this.directory = Files.isDirectory(this.path);
    this.loader = loader;
    this.onLoad = onLoad;
    this.reports = reports;
    this.pollMillis = pollMillis;
    this.ticker = ticker;
    this.watchService = FileSystems.getDefault().newWatchService();
    Path dir = directory ? this.path : this.path.getParent();
    dir.register(watchService, StandardWatchEventKinds.ENTRY_CREATE,
        StandardWatchEventKinds.ENTRY_MODIFY, StandardWatchEventKinds.ENTRY_DELETE);
    this.thread = CoreThreads.thread(this::run, "meridian-config-watcher");
  }

  /**
   * How emptyings are judged (default {@link Emptying.Guard#HOLD}: every one is held); call
   * before {@link #start}.
   */
  public ConfigWatcher guard(Emptying.Guard guard) {
    this.guard = guard;
    return this;
  }

  /** Loads the config once, synchronously; throws if it is invalid. Then starts watching. */
  public ConfigLoader.Loaded start() throws ConfigException {
    ConfigLoader.Loaded loaded = loadFirst();
    thread.start();
    return loaded;
  }

  /** The first load, without watching: {@link #start}, and tests that call {@link #check}. */
  ConfigLoader.Loaded loadFirst() throws ConfigException {
    lastStamp = stamp();
    ConfigLoader.Contents contents = reader.read(path, null);
    lastRead = contents;
    applied = loader.load(contents);
    appliedFilled = Emptying.filled(contents);
    appliedDigest = contents.digest();
    return applied;
  }

  private void run() {
    long due = IDLE;
    while (!closed) {
      try {
        long wait = due == IDLE ? pollMillis
            : Math.max(0, TimeUnit.NANOSECONDS.toMillis(due - ticker.getAsLong()) + 1);
        WatchKey key = watchService.poll(wait, TimeUnit.MILLISECONDS);
        if (key != null) {
          for (WatchEvent<?> e : key.pollEvents()) {
            if (e.kind() == StandardWatchEventKinds.OVERFLOW
                || e.kind() == StandardWatchEventKinds.ENTRY_MODIFY && isConfigFile(e.context())) {
              sawWriteInPlace();
            }
          }
          key.reset();
        }
        // An event while bytes settle wakes us early: the check when due sees what moved.
        if (due != IDLE && due - ticker.getAsLong() > 0) {
          continue;
        }
        due = check(ticker.getAsLong());
      } catch (InterruptedException | ClosedWatchServiceException e) {
        return;
      } catch (RuntimeException e) {
        LOG.error("config watcher: unexpected error", e);
        pending = null;
        due = IDLE;
      }
    }
  }

  private boolean isConfigFile(Object name) {
    return name instanceof Path p
        && (directory ? ConfigLoader.isConfigName(p) : p.equals(path.getFileName()));
  }

  /** A file event says a config file was written under its name (not renamed into place). */
  void sawWriteInPlace() {
    writtenInPlace = true;
  }

  /**
   * Checks the files at time {@code now} (the ticker's nanos) and applies or reports what has been
   * stable long enough. Returns when the next check is due, or {@link #IDLE}. Called by the
   * watcher thread only.
   */
  long check(long now) {
    Stamp stamp = stamp();
    if (pending == null && stamp.equals(lastStamp) && !readFailed) {
      writtenInPlace = false; // late events of a settled write: nothing to wait for
      return IDLE;
    }
    Pending seen = Pending.read(reader, path, lastRead, stamp, now);
    if (seen.contents != null) {
      lastRead = seen.contents;
    }
    if (pending == null || !pending.sameBytes(seen)) {
      // Written in place: seen by its events, or (without them) by a file that kept its identity.
      seen.inPlace = writtenInPlace || pending != null && pending.inPlace
          || stamp.changedInPlace(pending != null ? pending.stamp : lastStamp);
      pending = seen; // new bytes: their quiet period starts now
      return now + seen.quiet();
    }
    Pending p = pending;
    p.inPlace |= writtenInPlace; // a write seen only now still needs the longer wait
    long stable = now - p.since;
    if (stable < p.quiet()) {
      return p.since + p.quiet();
    }
    if (Arrays.equals(p.digest, appliedDigest)) {
      settle(p);
      boolean wasReported = reportedDigest.length > 0;
      reportedDigest = new byte[0]; // back to what is served: the same mistake again is news
      if (wasReported) {
        reports.recovered(); // nothing to apply, but the failure shown is over
      }
      return IDLE; // identical content: nothing to do
    }
    if (Arrays.equals(p.digest, reportedDigest)) {
      settle(p);
      return IDLE; // a failure already reported
    }
    if (p.unreadable != null) {
      settle(p);
      reportedDigest = p.digest;
      reports.failed(p.unreadable);
      return IDLE;
    }
    if (p.loaded == null) {
      try {
        p.loaded = loader.load(p.contents);
      } catch (ConfigException e) {
        settle(p);
        reportedDigest = p.digest;
        reports.failed(e);
        return IDLE;
      }
      p.filled = Emptying.filled(p.contents);
      p.emptied = Emptying.emptied(appliedFilled, p.contents, p.filled);
      p.removed = Emptying.removed(appliedFilled, p.contents);
      // Whoever subscribes: a possible emptying waits its second before it is judged.
      p.mayEmpty = Emptying.find(applied.config(), p.loaded.config(), p.emptied, p.removed,
          Emptying.Subscribers.ANYONE).any();
    }
    if (p.mayEmpty && stable < EMPTYING_NANOS) {
      // Keep re-reading meanwhile: a write that resumes replaces these bytes.
      long guardEnds = p.since + EMPTYING_NANOS;
      long next = now + QUIET_IN_PLACE_NANOS;
      return guardEnds - next < 0 ? guardEnds : next;
    }
    Emptying.Found found = !p.mayEmpty ? Emptying.Found.NOTHING
        : Emptying.find(applied.config(), p.loaded.config(), p.emptied, p.removed,
            guard.subscribers()); // who is subscribed now, a second after the write
    settle(p);
    if (guard.holds(found)) {
      // Not applied: reported once, like a failure; the next reload is compared with the served.
      reportedDigest = p.digest;
      reports.failed(new ConfigHeld(found));
      return IDLE;
    }
    if (found.any()) {
      LOG.warn(LogLine.of("config_emptying")
          .kv("removes", String.join("; ", found.all()))
          .kv("stable_ms", TimeUnit.NANOSECONDS.toMillis(stable))
          .kv("because", found.holds() ? "--allow-emptying" : "no client subscribes to it")
          .toString());
    }
    try {
      onLoad.apply(p.loaded);
    } catch (ConfigException e) {
      // Rejected: the old config is still served, so later reloads are compared with it; this
      // content is reported once, like one that failed to load.
      reportedDigest = p.digest;
      reports.failed(e);
      return IDLE;
    }
    applied = p.loaded;
    appliedFilled = p.filled;
    appliedDigest = p.digest;
    reportedDigest = new byte[0]; // the same bad content again later is news again
    return IDLE;
  }

  private void settle(Pending p) {
    lastStamp = p.stamp;
    pending = null;
    writtenInPlace = false;
    // What makes a file readable again (chmod, an ACL, a mount) need not change its stamp.
    readFailed = p.unreadable != null || !p.contents.unreadable().isEmpty();
  }

  /** Bytes read at one instant, with the stamp seen just before: compared after the quiet period. */
  private static final class Pending {
    final Stamp stamp;
    final long since;
    final ConfigLoader.Contents contents;
    final ConfigException unreadable;
    final byte[] digest;
    boolean inPlace;
    ConfigLoader.Loaded loaded;
    /** With {@code loaded}: the files with content, those left blank or gone, and whether it may empty. */
    Set<Path> filled;
    List<Path> emptied;
    List<Path> removed;
    boolean mayEmpty;

    private Pending(Stamp stamp, long since, ConfigLoader.Contents contents,
        ConfigException unreadable, byte[] digest) {
      this.stamp = stamp;
      this.since = since;
      this.contents = contents;
      this.unreadable = unreadable;
      this.digest = digest;
    }

    static Pending read(Reader reader, Path path, ConfigLoader.Contents previous, Stamp stamp,
        long now) {
      try {
        // Read once, digested and loaded; a file unchanged since the last read is not read again.
        ConfigLoader.Contents c = reader.read(path, previous);
        return new Pending(stamp, now, c, null, c.digest());
      } catch (ConfigException e) {
        byte[] d = ("error:" + e.getMessage()).getBytes(StandardCharsets.UTF_8);
        return new Pending(stamp, now, null, e, d);
      }
    }

    boolean sameBytes(Pending later) {
      return stamp.equals(later.stamp) && Arrays.equals(digest, later.digest);
    }

    long quiet() {
      return inPlace ? QUIET_IN_PLACE_NANOS : QUIET_RENAMED_NANOS;
    }
  }

  /** The config files' stamps, or why they could not be listed. */
  record Stamp(Map<Path, ConfigLoader.FileStamp> files, String error) {
    static final Stamp NONE = new Stamp(Map.of(), "none");

    /**
     * Whether a file changed but kept its identity: written under its name, not replaced by
     * another. Without identities (some file systems) every change counts as written in place.
     */
    boolean changedInPlace(Stamp before) {
      for (Map.Entry<Path, ConfigLoader.FileStamp> e : files.entrySet()) {
        ConfigLoader.FileStamp was = before.files.get(e.getKey());
        ConfigLoader.FileStamp now = e.getValue();
        if (was != null && !was.equals(now) && (now.key() == null || now.key().equals(was.key()))) {
          return true;
        }
      }
      return false;
    }
  }

  private Stamp stamp() {
    Map<Path, ConfigLoader.FileStamp> files = new LinkedHashMap<>();
    try {
      for (Path p : ConfigLoader.files(path)) {
        files.put(p, ConfigLoader.FileStamp.of(p));
      }
    } catch (ConfigException | IOException e) {
      return new Stamp(Map.of(), String.valueOf(e.getMessage()));
    }
    return new Stamp(files, null);
  }


  @Override
  public void close() {
    closed = true;
    try {
      watchService.close();
    } catch (IOException e) {
      // closing anyway
    }
    thread.interrupt();
    if (Thread.currentThread() != thread && thread.isAlive()) {
      try {
        thread.join(5000); // a reload in progress finishes before close returns
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
