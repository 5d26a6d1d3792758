package dev.meridian.config;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Watches a config file or directory and reloads it when its content changes. Uses the platform's
 * file notifications (inotify on Linux) and, as a fallback for file systems without them, checks
 * file stamps every {@code pollInterval}. Identical content is never reloaded. A failed load is
 * reported and the last good config stays in force (the caller simply keeps serving it).
 */
public final class ConfigWatcher implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(ConfigWatcher.class.getName());
  private static final long QUIET_MILLIS = 15;
  private static final long SETTLE_MAX_MILLIS = 250;
  /** After a failed load: how long further file events mean "that was a torn read". */
  private static final long RETRY_MILLIS = 250;

  private final Path path;
  private final ConfigLoader loader;
  private final Consumer<ConfigLoader.Loaded> onLoad;
  private final Consumer<ConfigException> onError;
  private final long pollMillis;
  private final WatchService watchService;
  private final Thread thread;
  private volatile boolean closed;
  private String lastStamp = "";
  private byte[] lastDigest = new byte[0];

  public ConfigWatcher(Path path, ConfigLoader loader, Consumer<ConfigLoader.Loaded> onLoad,
      Consumer<ConfigException> onError, long pollMillis) throws IOException {
    this.path = path.toAbsolutePath();
    this.loader = loader;
    this.onLoad = onLoad;
    this.onError = onError;
    this.pollMillis = pollMillis;
    this.watchService = FileSystems.getDefault().newWatchService();
    Path dir = Files.isDirectory(this.path) ? this.path : this.path.getParent();
    dir.register(watchService, StandardWatchEventKinds.ENTRY_CREATE,
        StandardWatchEventKinds.ENTRY_MODIFY, StandardWatchEventKinds.ENTRY_DELETE);
    this.thread = new Thread(this::run, "meridian-config-watcher");
    this.thread.setDaemon(true);
  }

  /** Loads the config once, synchronously; throws if it is invalid. Then starts watching. */
  public ConfigLoader.Loaded start() throws ConfigException {
    lastStamp = stamp();
    ConfigLoader.Contents contents = ConfigLoader.read(path);
    ConfigLoader.Loaded loaded = loader.load(contents);
    lastDigest = contents.digest();
    thread.start();
    return loaded;
  }

  private void run() {
    while (!closed) {
      try {
        WatchKey key = watchService.poll(pollMillis, TimeUnit.MILLISECONDS);
        if (key != null) {
          // Editors write in bursts (truncate, write, rename): wait until the burst has been
          // quiet for QUIET_MILLIS (at most SETTLE_MAX_MILLIS), so a rename costs one short wait.
          long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MAX_MILLIS);
          while (key != null) {
            key.pollEvents();
            key.reset();
            if (System.nanoTime() > deadline) {
              break;
            }
            key = watchService.poll(QUIET_MILLIS, TimeUnit.MILLISECONDS);
          }
        }
        ConfigException failed = checkNow();
        if (failed != null) {
          // A file read mid-write fails to parse; if more events follow shortly, that was it:
          // load the final content instead of reporting the torn read.
          WatchKey more = watchService.poll(RETRY_MILLIS, TimeUnit.MILLISECONDS);
          if (more != null) {
            more.pollEvents();
            more.reset();
            lastDigest = new byte[0];
            lastStamp = "";
            continue; // the loop settles the burst and loads again
          }
          onError.accept(failed);
        }
      } catch (InterruptedException | ClosedWatchServiceException e) {
        return;
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.ERROR, "config watcher: unexpected error", e);
      }
    }
  }

  /**
   * Reloads if the files changed since the last check. Called by the watcher thread. Returns the
   * problem if the changed files do not load (the caller reports it), else null.
   */
  ConfigException checkNow() {
    String stamp = stamp();
    if (stamp.equals(lastStamp)) {
      return null;
    }
    lastStamp = stamp;
    ConfigLoader.Contents contents;
    try {
      contents = ConfigLoader.read(path); // read once: digested and loaded
    } catch (ConfigException e) {
      byte[] digest = ("error:" + e.getMessage()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
      boolean reported = Arrays.equals(digest, lastDigest);
      lastDigest = digest;
      return reported ? null : e;
    }
    byte[] digest = contents.digest();
    if (Arrays.equals(digest, lastDigest)) {
      return null; // rewritten with identical content: nothing to do
    }
    try {
      ConfigLoader.Loaded loaded = loader.load(contents);
      lastDigest = digest;
      onLoad.accept(loaded);
      return null;
    } catch (ConfigException e) {
      lastDigest = digest; // report a bad file once, not on every stamp check
      return e;
    }
  }

  /** Names, sizes, modification times and link targets of the config files. */
  private String stamp() {
    StringBuilder sb = new StringBuilder();
    try {
      for (Path p : ConfigLoader.files(path)) {
        BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
        sb.append(p).append('|').append(a.size()).append('|')
            .append(a.lastModifiedTime().toMillis()).append('|').append(a.fileKey());
        if (Files.isSymbolicLink(p)) {
          sb.append("->").append(p.toRealPath());
        }
        sb.append('\n');
      }
    } catch (ConfigException | IOException e) {
      sb.append("error:").append(e.getMessage());
    }
    return sb.toString();
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
