package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.InPlaceWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 18 §2: a config file rewritten in place (truncate, then write) must never be applied
 * half-written, and a reload that empties a type or the whole config waits for 1 s of stability;
 * then it is held, unless no client subscribes to what it empties or emptyings are allowed. The
 * rewrite scenarios use real files, real writes and the watcher's own thread; the emptying guard
 * is also driven with a fake ticker, so its second is not waited in real time there.
 */
class ConfigWatcherTest {
  private static final long Q = ConfigWatcher.QUIET_IN_PLACE_NANOS;
  private static final long R = ConfigWatcher.QUIET_RENAMED_NANOS;
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  @TempDir Path dir;
  final BlockingQueue<ServedConfig> applied = new LinkedBlockingQueue<>();
  final List<ConfigException> errors = new CopyOnWriteArrayList<>();
  final AtomicLong recoveries = new AtomicLong();
  /** Failures (held ones too) into {@link #errors}; recoveries counted. */
  final ConfigWatcher.Reports reports = new ConfigWatcher.Reports() {
    @Override public void failed(ConfigException problems) {
      errors.add(problems);
    }

    @Override public void recovered() {
      recoveries.incrementAndGet();
    }
  };
  /** No client subscribes to anything: only the whole config and blank files hold. */
  static final Emptying.Guard NO_SUBSCRIBERS = new Emptying.Guard(false, (group, type) -> false);
  static final Emptying.Guard ALLOWED = new Emptying.Guard(true, Emptying.Subscribers.ANYONE);
  final List<String> warnings = new CopyOnWriteArrayList<>();
  final List<ConfigWatcher> watchers = new ArrayList<>();
  final Logger log = Logger.getLogger("dev.meridian.config.ConfigWatcher");
  final Handler capture = new Handler() {
    @Override public void publish(LogRecord r) {
      if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
        warnings.add(r.getMessage());
      }
    }

    @Override public void flush() {}

    @Override public void close() {}
  };

  @BeforeEach
  void captureWarnings() {
    log.addHandler(capture);
  }

  @AfterEach
  void cleanUp() {
    watchers.forEach(ConfigWatcher::close);
    log.removeHandler(capture);
  }

  static String cluster(String name) {
    return "  - { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: " + name
        + ", connect_timeout: 1s, per_connection_buffer_limit_bytes: 32768 }\n";
  }

  static String endpoints(String cluster) {
    return "  - { \"@type\": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment,"
        + " cluster_name: " + cluster + " }\n";
  }

  /** The rewritten file: one resource of its own first, then 30 common ones a prefix lacks. */
  static String version(String own) {
    StringBuilder sb = new StringBuilder("resources:\n").append(cluster(own));
    for (int i = 0; i < 30; i++) {
      sb.append(cluster(String.format("common-%02d", i)));
    }
    return sb.toString();
  }

  static Set<String> clusters(ServedConfig c) {
    return new TreeSet<>(c.defaults().get(ResourceType.CLUSTER).resources().keySet());
  }

  /** A single config file, or one file of a config directory (beside one that never changes). */
  enum Layout {
    FILE, DIRECTORY;

    /** Creates the config with {@code text} in the edited file; returns the path to watch. */
    Path create(Path dir, String text) throws IOException {
      if (this == FILE) {
        Files.writeString(dir.resolve("config.yaml"), text);
        return dir.resolve("config.yaml");
      }
      Path d = Files.createDirectory(dir.resolve("conf.d"));
      Files.writeString(d.resolve("base.yaml"), "resources:\n" + cluster("base-1") + cluster("base-2"));
      Files.writeString(d.resolve("edited.yaml"), text);
      return d;
    }

    Path edited(Path watched) {
      return this == FILE ? watched : watched.resolve("edited.yaml");
    }

    Set<String> unchanged() {
      return this == FILE ? Set.of() : Set.of("base-1", "base-2");
    }
  }

  ConfigWatcher watch(Path path) throws Exception {
    ConfigWatcher w = new ConfigWatcher(path, new ConfigLoader(), l -> applied.add(l.config()),
        errors::add, 50);
    watchers.add(w);
    w.start();
    return w;
  }

  /** A watcher on a fake ticker whose thread never runs: the test calls {@code check}. */
  ConfigWatcher watchByHand(Path path) throws Exception {
    return watchByHand(path, Emptying.Guard.HOLD);
  }

  /** The same, judging emptyings with {@code guard}. */
  ConfigWatcher watchByHand(Path path, Emptying.Guard guard) throws Exception {
    ConfigWatcher w = new ConfigWatcher(path, new ConfigLoader(), l -> applied.add(l.config()),
        reports, 50, () -> {
          throw new AssertionError("the test drives time");
        }).guard(guard);
    watchers.add(w);
    w.loadFirst();
    return w;
  }

  /**
   * The same, with an applier that may reject what it is given (serve's --reference-check); no
   * client subscribes, so an emptying of a type reaches the applier.
   */
  ConfigWatcher watchByHand(Path path, ConfigWatcher.Applier applier) throws Exception {
    ConfigWatcher w = new ConfigWatcher(path, new ConfigLoader(), applier, reports, 50, () -> {
      throw new AssertionError("the test drives time");
    }).guard(NO_SUBSCRIBERS);
    watchers.add(w);
    w.loadFirst();
    return w;
  }

  /** Checks from {@code t} until the watcher is idle; returns the last time it was due. */
  static long settle(ConfigWatcher w, long t) {
    for (long due = w.check(t); due != ConfigWatcher.IDLE; due = w.check(due)) {
      t = due;
    }
    return t;
  }

  /** Takes applied configs until one has exactly {@code expected}'s clusters; checks each. */
  Set<String> awaitApplied(Set<String> expected, Set<String> everyConfigHas, String context)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      ServedConfig c = applied.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      assertThat(c).as("%s: a reload to %s within 10 s", context, expected).isNotNull();
      assertThat(clusters(c)).as("%s: an applied config", context).containsAll(everyConfigHas);
      if (clusters(c).equals(expected)) {
        return clusters(c);
      }
    }
  }

  static Stream<Arguments> rewrites() {
    return Stream.of(
        Arguments.of(InPlaceWriter.FAST, Layout.FILE, 30),
        Arguments.of(InPlaceWriter.SLOW, Layout.FILE, 30),
        Arguments.of(InPlaceWriter.REDIRECTED, Layout.FILE, 10),
        Arguments.of(InPlaceWriter.FAST, Layout.DIRECTORY, 20),
        Arguments.of(InPlaceWriter.SLOW, Layout.DIRECTORY, 20),
        Arguments.of(InPlaceWriter.REDIRECTED, Layout.DIRECTORY, 6));
  }

  /**
   * Issue 18 §2: across many in-place rewrites between two versions, no applied config lacks a
   * resource present in both (a prefix of the file lacks the common resources at its end), and no
   * read of a file being written is reported as an error.
   */
  @ParameterizedTest(name = "{0} writer, {1}, {2} rewrites")
  @MethodSource("rewrites")
  @Timeout(value = 120)
  void inPlaceRewritesAreNeverAppliedHalfWritten(InPlaceWriter writer, Layout layout, int rewrites)
      throws Exception {
    Path watched = layout.create(dir, version("only-a"));
    watch(watched);
    Set<String> common = common(layout);
    for (int i = 0; i < rewrites; i++) {
      String own = i % 2 == 0 ? "only-b" : "only-a";
      writer.write(layout.edited(watched), version(own));
      awaitApplied(with(common, own), common, "rewrite " + i);
    }
    assertThat(errors).as("torn reads reported as errors").isEmpty();
    assertThat(warnings).isEmpty();
  }

  static Set<String> common(Layout layout) {
    Set<String> common = new TreeSet<>(layout.unchanged());
    for (int i = 0; i < 30; i++) {
      common.add(String.format("common-%02d", i));
    }
    return common;
  }

  static Set<String> with(Set<String> common, String own) {
    Set<String> s = new TreeSet<>(common);
    s.add(own);
    return s;
  }

  /** Issue 18 §2: the quiet period must not make an atomic rename slow. */
  @ParameterizedTest
  @EnumSource(Layout.class)
  @Timeout(value = 60)
  void atomicRenameStillReloadsWithinOneSecond(Layout layout) throws Exception {
    Path watched = layout.create(dir, version("only-a"));
    watch(watched);
    Path edited = layout.edited(watched);
    for (int i = 0; i < 5; i++) {
      String own = "renamed-" + i;
      long renamed = ConfigFiles.replaceByRename(edited, version(own));
      awaitApplied(with(common(layout), own), common(layout), "rename " + i);
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - renamed);
      assertThat(millis).as("rename %d reloaded after %d ms", i, millis).isLessThan(1000);
    }
  }

  /**
   * Issue 18 §2, the mechanism with time held still: bytes that move within the quiet period are
   * read again and not applied; only bytes unchanged across a whole quiet period are.
   */
  @Test
  void bytesThatMoveWithinTheQuietPeriodAreNotApplied() throws Exception {
    Path file = Layout.FILE.create(dir, version("only-a"));
    ConfigWatcher w = watchByHand(file);
    String next = version("only-b");
    String half = next.substring(0, InPlaceWriter.cuts(next, 2).get(0)); // valid YAML, half the clusters
    Files.writeString(file, half);
    assertThat(w.check(0)).isEqualTo(Q);
    assertThat(w.check(Q / 2)).as("woken early: still settling").isEqualTo(Q);
    Files.writeString(file, next); // the writer finishes
    assertThat(w.check(Q)).as("the bytes moved: a new quiet period").isEqualTo(2 * Q);
    assertThat(applied).isEmpty();
    assertThat(w.check(2 * Q)).isEqualTo(ConfigWatcher.IDLE);
    assertThat(applied).singleElement().satisfies(c ->
        assertThat(clusters(c)).isEqualTo(with(common(Layout.FILE), "only-b")));
  }

  /**
   * Issue 18 §2: a file renamed into place was written whole before; only the short settle for a
   * burst of renames applies, so a reload by rename stays as fast as before the quiet period.
   */
  @Test
  void aFileRenamedIntoPlaceNeedsOnlyTheShortQuietPeriod() throws Exception {
    Path file = Layout.FILE.create(dir, version("only-a"));
    ConfigWatcher w = watchByHand(file);
    w.sawWriteInPlace(); // a late event of the write already loaded: nothing changed since
    assertThat(w.check(0)).isEqualTo(ConfigWatcher.IDLE);
    ConfigFiles.replaceByRename(file, version("only-b"));
    assertThat(w.check(SECOND)).isEqualTo(SECOND + R);
    assertThat(w.check(SECOND + R)).isEqualTo(ConfigWatcher.IDLE);
    assertThat(applied).singleElement().satisfies(c ->
        assertThat(clusters(c)).isEqualTo(with(common(Layout.FILE), "only-b")));
  }

  /**
   * Issue 18 §2: a new file written under the config's name (an editor that moves the original
   * to a backup first) is a write in place once it is seen growing, or once a file event says so.
   */
  @Test
  void aNewFileWrittenUnderTheConfigNameGetsTheLongQuietPeriod() throws Exception {
    Path file = Layout.FILE.create(dir, version("only-a"));
    ConfigWatcher w = watchByHand(file);
    Files.move(file, dir.resolve("config.yaml~")); // keeps the old inode: the new file has its own
    String next = version("only-b");
    int half = InPlaceWriter.cuts(next, 2).get(0);
    Files.writeString(file, next.substring(0, half));
    assertThat(w.check(0)).as("a new file, no event seen yet").isEqualTo(R);
    Files.writeString(file, next.substring(half), StandardOpenOption.APPEND);
    assertThat(w.check(R)).as("it grew under its name").isEqualTo(R + Q);
    assertThat(w.check(R + Q)).isEqualTo(ConfigWatcher.IDLE);
    assertThat(applied).singleElement().satisfies(c ->
        assertThat(clusters(c)).isEqualTo(with(common(Layout.FILE), "only-b")));

    Files.move(file, dir.resolve("config.yaml~"), StandardCopyOption.REPLACE_EXISTING);
    Files.writeString(file, version("only-c").substring(0, half));
    w.sawWriteInPlace(); // the file event of that write
    long t = 2 * SECOND;
    assertThat(w.check(t)).isEqualTo(t + Q);
    assertThat(w.check(t + R)).as("not applied after the short period").isEqualTo(t + Q);
    assertThat(applied).hasSize(1);
  }

  /** The one held reload reported: what it would remove. */
  Emptying.Found held() {
    assertThat(errors).hasSize(1).allSatisfy(e -> assertThat(e).isInstanceOf(ConfigHeld.class));
    return ((ConfigHeld) errors.get(0)).found();
  }

  /**
   * Emptying one type waits 1 s of stability, then is held: not applied, reported once naming
   * what it would remove, and not again while the file holds the same bytes.
   */
  @Test
  void emptyingATypeIsHeldAfterOneSecondOfStabilityAndReportedOnce() throws Exception {
    Path file = Layout.FILE.create(dir, "resources:\n" + cluster("a") + cluster("b")
        + endpoints("a"));
    ConfigWatcher w = watchByHand(file);
    String emptied = "resources:\n" + endpoints("a");
    Files.writeString(file, emptied);
    long now = w.check(0);
    while (now < SECOND) {
      now = w.check(now);
      assertThat(errors).as("judged %d ms after the write", now / 1_000_000).isEmpty();
    }
    assertThat(now).isEqualTo(SECOND);
    assertThat(w.check(SECOND)).isEqualTo(ConfigWatcher.IDLE);
    assertThat(applied).isEmpty();
    assertThat(held().holding()).containsExactly("CDS: all 2 (a, b)");
    assertThat(warnings).isEmpty();

    Files.writeString(file, emptied); // the same bytes, a new stamp
    settle(w, 2 * SECOND);
    assertThat(errors).as("held already, and said so").hasSize(1);
    assertThat(applied).isEmpty();
  }

  /** Emptying a type no connected client subscribes to cuts no one off: applied, with a warning. */
  @Test
  void emptyingATypeNoClientSubscribesToIsAppliedAfterOneSecondWithAWarning() throws Exception {
    Path file = Layout.FILE.create(dir, "resources:\n" + cluster("a") + cluster("b")
        + endpoints("a"));
    ConfigWatcher w = watchByHand(file, NO_SUBSCRIBERS);
    Files.writeString(file, "resources:\n" + endpoints("a"));
    long now = w.check(0);
    while (now < SECOND) {
      now = w.check(now);
      assertThat(applied).as("applied %d ms after the write", now / 1_000_000).isEmpty();
    }
    assertThat(w.check(SECOND)).isEqualTo(ConfigWatcher.IDLE);
    assertThat(applied).singleElement().satisfies(c -> {
      assertThat(c.defaults().get(ResourceType.CLUSTER).size()).isZero();
      assertThat(c.defaults().get(ResourceType.ENDPOINT).resources()).containsOnlyKeys("a");
    });
    assertThat(errors).isEmpty();
    assertThat(warnings).singleElement().isEqualTo("config_emptying removes=\"CDS: all 2 (a, b)\""
        + " stable_ms=1000 because=\"no client subscribes to it\"");
  }

  /** {@code serve --allow-emptying}: an emptying is applied after its second, with a warning. */
  @Test
  void withEmptyingsAllowedATruncatedFileIsAppliedAfterOneSecondWithAWarning() throws Exception {
    Path file = Layout.FILE.create(dir, version("only-a"));
    ConfigWatcher w = watchByHand(file, ALLOWED);
    Files.writeString(file, "");
    assertThat(w.check(0)).isEqualTo(Q);
    assertThat(w.check(Q)).isEqualTo(2 * Q);
    assertThat(w.check(SECOND - 1)).isEqualTo(SECOND);
    assertThat(applied).isEmpty();
    assertThat(w.check(SECOND)).isEqualTo(ConfigWatcher.IDLE);
    assertThat(applied).singleElement().satisfies(c -> assertThat(clusters(c)).isEmpty());
    assertThat(errors).isEmpty();
    assertThat(warnings).singleElement().satisfies(m -> assertThat(m)
        .startsWith("config_emptying removes=\"the whole config: all 31 resources; CDS: all 31 (")
        .endsWith("file config.yaml: emptied\" stable_ms=1000 because=--allow-emptying"));
  }

  /**
   * Emptying the whole config (an empty file, or every file of a directory deleted) is held even
   * when no client is connected: a client that connects next would be told everything is gone.
   */
  @ParameterizedTest
  @EnumSource(Layout.class)
  void emptyingTheWholeConfigIsHeldEvenWithNoClientConnected(Layout layout) throws Exception {
    Path watched = layout.create(dir, version("only-a"));
    ConfigWatcher w = watchByHand(watched, NO_SUBSCRIBERS);
    if (layout == Layout.FILE) {
      Files.writeString(watched, ""); // truncated, nothing written yet
    } else {
      try (Stream<Path> files = Files.list(watched)) {
        for (Path f : files.toList()) {
          Files.delete(f);
        }
      }
    }
    long due = w.check(0);
    assertThat(due).as("truncated in place, or files deleted").isEqualTo(
        layout == Layout.FILE ? Q : R);
    assertThat(w.check(due)).as("stable, waiting, read again").isEqualTo(due + Q);
    assertThat(w.check(SECOND - 1)).isEqualTo(SECOND);
    assertThat(errors).isEmpty();
    assertThat(w.check(SECOND)).isEqualTo(ConfigWatcher.IDLE);
    assertThat(applied).isEmpty();
    assertThat(warnings).isEmpty();
    int before = common(layout).size() + 1;
    assertThat(held().holding()).first().isEqualTo(
        "the whole config: all " + before + " resources");
    assertThat(String.join("; ", held().all()))
        .contains("; CDS: all " + before + " (", ", " + (before - 5) + " more)")
        .endsWith(layout == Layout.FILE ? "file config.yaml: emptied"
            : "file base.yaml: removed; file edited.yaml: removed");
  }

  /**
   * Directory mode: one file truncated and not yet written leaves every type with resources
   * (from the other files), yet it is the same outage for its own: a blank file is always held.
   */
  @Test
  void aBlankFileOfADirectoryIsHeldWhateverTheOtherFilesHold() throws Exception {
    Path watched = Layout.DIRECTORY.create(dir, version("only-a"));
    ConfigWatcher w = watchByHand(watched, NO_SUBSCRIBERS);
    Files.writeString(Layout.DIRECTORY.edited(watched), "  \n");
    assertThat(w.check(0)).isEqualTo(Q);
    assertThat(w.check(Q)).isEqualTo(2 * Q);
    assertThat(w.check(SECOND - 1)).isEqualTo(SECOND);
    assertThat(w.check(SECOND)).isEqualTo(ConfigWatcher.IDLE);
    assertThat(applied).isEmpty();
    assertThat(held().holding()).containsExactly("file edited.yaml: emptied");
    assertThat(warnings).isEmpty();
  }

  /**
   * A file of a directory deleted (rm, not a truncation) that leaves every type clients use with
   * resources cuts no one off: applied after its second, with a warning.
   */
  @Test
  void aFileDeletedFromADirectoryThatEmptiesNoTypeIsAppliedWithAWarning() throws Exception {
    Path watched = Layout.DIRECTORY.create(dir, version("only-a"));
    ConfigWatcher w = watchByHand(watched);
    Files.delete(Layout.DIRECTORY.edited(watched));
    settle(w, 0);
    assertThat(errors).isEmpty();
    assertThat(applied).singleElement().satisfies(c ->
        assertThat(clusters(c)).containsExactly("base-1", "base-2"));
    assertThat(warnings).singleElement().isEqualTo("config_emptying removes=\"file edited.yaml: "
        + "removed\" stable_ms=1000 because=\"no client subscribes to it\"");
  }

  /**
   * A held content is reported once; another held content is news and reported too; going back
   * to the served content is acknowledged as recovered, and the same truncation later is news.
   */
  @Test
  void aDifferentHeldContentIsReportedAgainAndTheServedContentIsARecovery() throws Exception {
    String served = version("only-a");
    Path file = Layout.FILE.create(dir, served);
    ConfigWatcher w = watchByHand(file);
    Files.writeString(file, "");
    long t = settle(w, 0) + SECOND;
    Files.writeString(file, "\n\n"); // blank too, other bytes
    t = settle(w, t) + SECOND;
    Files.writeString(file, "\n\n");
    t = settle(w, t) + SECOND;
    assertThat(errors).as("two held contents, each reported once").hasSize(2)
        .allSatisfy(e -> assertThat(e).isInstanceOf(ConfigHeld.class));
    assertThat(recoveries).hasValue(0);

    Files.writeString(file, served);
    t = settle(w, t) + SECOND;
    assertThat(recoveries).hasValue(1);
    assertThat(applied).as("identical to what is served: nothing to apply").isEmpty();
    Files.writeString(file, served);
    t = settle(w, t) + SECOND;
    assertThat(recoveries).as("recovered once").hasValue(1);

    Files.writeString(file, "");
    settle(w, t);
    assertThat(errors).as("the same truncation again, after the recovery: news").hasSize(3);
  }

  /** Issue 18 §2: a truncated file written within the second is never served empty. */
  @Test
  void anEmptyingRewriteThatResumesWithinTheSecondIsNeverApplied() throws Exception {
    Path file = Layout.FILE.create(dir, version("only-a"));
    ConfigWatcher w = watchByHand(file);
    Files.writeString(file, "");
    w.check(0);
    w.check(Q);
    w.check(3 * Q);
    Files.writeString(file, version("only-b"));
    long due = w.check(4 * Q);
    assertThat(w.check(due)).isEqualTo(ConfigWatcher.IDLE);
    assertThat(applied).singleElement().satisfies(c ->
        assertThat(clusters(c)).isEqualTo(with(common(Layout.FILE), "only-b")));
    assertThat(warnings).isEmpty();
  }

  /** Kept from before issue 18: identical content is not reloaded; a bad file is reported once. */
  @Test
  void identicalContentIsNotReloadedAndABadFileIsReportedOnce() throws Exception {
    String good = version("only-a");
    Path file = Layout.FILE.create(dir, good);
    ConfigWatcher w = watchByHand(file);
    long t = 0;
    for (String text : List.of(good, "resources: [ {", "resources: [ {", good, "resources: [ {")) {
      Files.writeString(file, text); // a new mtime each time, even with the same bytes
      for (long due = w.check(t); due != ConfigWatcher.IDLE; due = w.check(due)) {
        t = due;
      }
      t += SECOND;
    }
    assertThat(applied).as("identical content reloaded").isEmpty();
    assertThat(errors).as("the bad file, then the same mistake again after the good file")
        .hasSize(2);
    assertThat(errors.get(0).getMessage()).contains("invalid YAML");
  }

  /**
   * A read that failed is tried again on every check until it succeeds: what makes a file
   * readable again (chmod) changes neither its bytes nor its stamp. The failure is the one the
   * platform gives a process that may not read the file (a test run as root is never refused, so
   * the read is refused here, as the next test does for real where it can); the fix does not look
   * at why a read failed.
   */
  @Test
  void aFileThatCouldNotBeReadIsReloadedOnceItCanBeWithoutBeingTouched() throws Exception {
    Path file = Layout.FILE.create(dir, version("a"));
    java.util.concurrent.atomic.AtomicBoolean denied = new java.util.concurrent.atomic.AtomicBoolean();
    ConfigWatcher w = new ConfigWatcher(file, new ConfigLoader(), l -> applied.add(l.config()),
        errors::add, 50, () -> {
          throw new AssertionError("the test drives time");
        }, (path, previous) -> {
          if (!denied.get()) {
            return ConfigLoader.read(path, previous);
          }
          java.util.Map<Path, String> refused = new java.util.HashMap<>();
          for (Path f : ConfigLoader.files(path)) {
            refused.put(f, f + ": Permission denied");
          }
          return new ConfigLoader.Contents(ConfigLoader.files(path), java.util.Map.of(), refused);
        });
    watchers.add(w);
    w.loadFirst();

    denied.set(true);
    ConfigFiles.replaceByRename(file, version("b"));
    long t = settle(w, 0);
    for (int i = 1; i <= 3; i++) {
      t = settle(w, t + SECOND); // still refused: read again, not reported again
    }
    assertThat(applied).isEmpty();
    assertThat(errors).singleElement().extracting(Throwable::getMessage).asString()
        .contains("Permission denied");

    denied.set(false); // the file's bytes and stamp are as they were
    settle(w, t + SECOND);
    assertThat(applied).singleElement().extracting(ConfigWatcherTest::clusters)
        .isEqualTo(clusters(new ConfigLoader().load(file).config()));
    assertThat(errors).hasSize(1);
  }

  /** The same for real, with chmod, where the test may be refused a read (not as root). */
  @Test
  void aConfigFileMadeReadableAgainIsReloadedWithoutATouch() throws Exception {
    Path file = Layout.FILE.create(dir, version("a"));
    Path next = Files.writeString(dir.resolve(".next.yaml"), version("b"));
    Files.setPosixFilePermissions(next, java.nio.file.attribute.PosixFilePermissions.fromString(
        "---------"));
    org.junit.jupiter.api.Assumptions.assumeFalse(Files.isReadable(next),
        "this process reads a file of mode 0000 (root): the test above covers it");
    watch(file);
    Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (errors.isEmpty()) {
      assertThat(System.nanoTime()).as("the refused read reported").isLessThan(deadline);
      java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
    }
    long modified = Files.getLastModifiedTime(file).toMillis();
    Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString(
        "rw-------"));
    awaitApplied(Set.copyOf(clusters(new ConfigLoader().load(file).config())), Set.of(),
        "made readable");
    assertThat(Files.getLastModifiedTime(file).toMillis()).isEqualTo(modified);
  }

  /** Rejects a config that has a ClusterLoadAssignment named reject-me, else applies it. */
  ConfigWatcher.Applier rejectingRejectMe() {
    return l -> {
      if (l.config().defaults().get(ResourceType.ENDPOINT).get("reject-me") != null) {
        throw new ConfigException("rejected: reject-me");
      }
      applied.add(l.config());
    };
  }

  /**
   * Review of issue 18 §2/§4: a config the applier rejects (serve --reference-check reject) is not
   * the served one, so the next reload is compared with what is served: emptying CDS still waits
   * its second and is judged, even when the rejected config had no clusters either.
   */
  @Test
  void aRejectedConfigIsNotWhatTheNextReloadIsComparedWith() throws Exception {
    Path file = Layout.FILE.create(dir, "resources:\n" + cluster("a") + cluster("b")
        + endpoints("a"));
    ConfigWatcher w = watchByHand(file, rejectingRejectMe());
    String rejected = "resources:\n" + endpoints("reject-me");
    Files.writeString(file, rejected);
    long t = settle(w, 0) + SECOND;
    assertThat(applied).isEmpty();
    assertThat(errors).singleElement().satisfies(e -> assertThat(e).hasMessage("rejected: reject-me"));
    Files.writeString(file, rejected); // the same content again: reported once, not retried
    t = settle(w, t) + SECOND;
    assertThat(errors).hasSize(1);

    warnings.clear();
    Files.writeString(file, "resources:\n" + endpoints("a"));
    long due = w.check(t);
    assertThat(w.check(due)).as("waiting: it empties the CDS that is served").isNotEqualTo(
        ConfigWatcher.IDLE);
    assertThat(applied).isEmpty();
    settle(w, due);
    assertThat(applied).singleElement().satisfies(c -> assertThat(clusters(c)).isEmpty());
    assertThat(warnings).singleElement().satisfies(m -> assertThat(m)
        .startsWith("config_emptying removes=\"CDS: all 2 (a, b)\""));
  }

  /**
   * After a rejection, going back to the served content reloads nothing, but is acknowledged:
   * the failure shown is over.
   */
  @Test
  void theServedContentAfterARejectedOneIsNotReloadedButReportedAsRecovered() throws Exception {
    String served = version("only-a");
    Path file = Layout.FILE.create(dir, served);
    ConfigWatcher w = watchByHand(file, rejectingRejectMe());
    Files.writeString(file, served + endpoints("reject-me"));
    long t = settle(w, 0) + SECOND;
    assertThat(errors).hasSize(1);
    assertThat(recoveries).hasValue(0);
    Files.writeString(file, served);
    settle(w, t);
    assertThat(applied).as("identical to what is served").isEmpty();
    assertThat(recoveries).hasValue(1);
  }

  /** Issue 18 §2, in real time: the watcher's own thread waits 1 s before an emptying. */
  @Test
  @Timeout(value = 30)
  void emptyingWaitsOneSecondOnTheWatcherThread() throws Exception {
    Path file = Layout.FILE.create(dir, version("only-a"));
    ConfigWatcher w = new ConfigWatcher(file, new ConfigLoader(), l -> applied.add(l.config()),
        reports, 50).guard(ALLOWED);
    watchers.add(w);
    w.start();
    long written = System.nanoTime();
    Files.writeString(file, "resources: []\n");
    ServedConfig c = applied.poll(10, TimeUnit.SECONDS);
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - written);
    assertThat(c).isNotNull();
    assertThat(clusters(c)).isEmpty();
    assertThat(millis).isGreaterThanOrEqualTo(1000);
    assertThat(warnings).singleElement().satisfies(m ->
        assertThat(m).startsWith("config_emptying removes=\"the whole config: all 31 resources;"));
  }
}
