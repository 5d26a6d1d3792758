package dev.meridian.bench.jmh;

import dev.meridian.bench.Fleet;
import dev.meridian.internal.config.ConfigException;
import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.config.ReferenceCheck;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A config reload as the server does it, with 10,000 clusters + 10,000 endpoint sets in one file,
 * YAML as people write it (block style) or strict JSON: {@code ConfigLoader.load} (read, parse,
 * validate, reuse unchanged resources), the reference check, and the diff. One edit: the file is
 * replaced by one that differs in one endpoint set, then back, so every reload has exactly one
 * change. Every cluster: alternates between two files whose every cluster differs.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g"})
@State(Scope.Thread)
public class ConfigReloadBenchmark {
  @Param({"10000"})
  int clusters;

  @Param({"yaml", "json"})
  String format;

  Path dir;
  /** The config as served, one endpoint set edited, every cluster changed. */
  byte[] base;
  byte[] oneEdited;
  byte[] allChanged;
  Path file;
  ConfigLoader loader;
  ServedConfig previous;
  boolean edited;

  @Setup(Level.Trial)
  public void setUp() throws IOException, ConfigException {
    dir = Files.createTempDirectory("meridian-reload");
    file = dir.resolve("config." + format);
    Fleet fleet = new Fleet(clusters, 2);
    base = write(fleet);
    fleet.changeEndpoints(clusters / 2);
    oneEdited = write(fleet);
    Fleet everyCluster = new Fleet(clusters, 2);
    everyCluster.changeAllClusters();
    allChanged = write(everyCluster);
    Files.write(file, base);
    loader = new ConfigLoader();
    previous = loader.load(file).config();
  }

  private byte[] write(Fleet fleet) throws IOException {
    if (format.equals("yaml")) {
      fleet.writeMeridianYaml(file);
    } else {
      fleet.writeMeridianConfig(file);
    }
    return Files.readAllBytes(file);
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    Files.deleteIfExists(file);
    Files.deleteIfExists(dir);
  }

  /** One endpoint set edited, as an operator edits one line: one resource changes. */
  @Benchmark
  public Map<ResourceType, Set<String>> reloadOneEndpointChanged() throws Exception {
    Map<ResourceType, Set<String>> diff = reload(edited ? base : oneEdited);
    edited = !edited;
    if (diff.get(ResourceType.ENDPOINT).size() != 1) {
      throw new IllegalStateException("expected exactly one change: " + diff);
    }
    return diff;
  }

  /** Every cluster changed, then back: 10,000 resources change each time. */
  @Benchmark
  public Map<ResourceType, Set<String>> reloadEveryClusterChanged() throws Exception {
    Map<ResourceType, Set<String>> diff = reload(edited ? base : allChanged);
    edited = !edited;
    if (diff.get(ResourceType.CLUSTER).size() != clusters) {
      throw new IllegalStateException("expected every cluster to change: " + diff);
    }
    return diff;
  }

  /** The file replaced by new content (a new inode, as by mv), loaded, checked and diffed. */
  private Map<ResourceType, Set<String>> reload(byte[] content) throws Exception {
    Path next = dir.resolve(".next");
    Files.write(next, content);
    Files.move(next, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    ServedConfig config = loader.load(file).config();
    List<String> problems = ReferenceCheck.problems(config);
    if (!problems.isEmpty()) {
      throw new IllegalStateException(problems.toString());
    }
    Map<ResourceType, Set<String>> diff = config.defaults().changedSince(previous.defaults());
    previous = config;
    return diff;
  }
}
