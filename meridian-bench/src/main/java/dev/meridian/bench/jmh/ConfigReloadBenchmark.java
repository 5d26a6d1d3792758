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
 * A config reload as the server does it for a one-cluster edit (one endpoint set changed), with
 * 10,000 clusters + 10,000 endpoint sets in one JSON file: {@code ConfigLoader.load} (read, parse,
 * validate, reuse unchanged resources), the reference check, and the diff. Alternates between two
 * files that differ in one endpoint set, so every reload has exactly one change.
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

  Path dir;
  Path a;
  Path b;
  ConfigLoader loader;
  ServedConfig previous;
  boolean atA;

  @Setup(Level.Trial)
  public void setUp() throws IOException, ConfigException {
    dir = Files.createTempDirectory("meridian-reload");
    Fleet fleet = new Fleet(clusters, 2);
    a = dir.resolve("a.json");
    fleet.writeMeridianConfig(a);
    fleet.changeEndpoints(clusters / 2);
    b = dir.resolve("b.json");
    fleet.writeMeridianConfig(b);
    loader = new ConfigLoader();
    previous = loader.load(a).config();
    atA = true;
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    Files.deleteIfExists(a);
    Files.deleteIfExists(b);
    Files.deleteIfExists(dir);
  }

  @Benchmark
  public Map<ResourceType, Set<String>> reloadOneEndpointChanged() throws ConfigException {
    ServedConfig next = loader.load(atA ? b : a).config();
    atA = !atA;
    List<String> problems = ReferenceCheck.problems(next);
    Map<ResourceType, Set<String>> diff = next.defaults().changedSince(previous.defaults());
    previous = next;
    if (!problems.isEmpty() || diff.get(ResourceType.ENDPOINT).size() != 1) {
      throw new IllegalStateException("expected exactly one change: " + diff + " " + problems);
    }
    return diff;
  }
}
