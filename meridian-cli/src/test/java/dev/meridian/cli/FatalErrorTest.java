package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An Error in one of the server's threads ends the process (docs/reliability.md, "Out of
 * memory"): out of memory, a server whose config watcher, ticker or HTTP threads died used to
 * hold its ports and answer nothing; ended, its supervisor restarts it. The real server in a
 * process of its own, with a small heap and without the launchers' {@code
 * -XX:+ExitOnOutOfMemoryError}, so that what ends it is Meridian's own handler.
 */
class FatalErrorTest {
  @TempDir Path dir;

  @Test
  void outOfMemoryInTheConfigWatcherEndsTheProcess() throws Exception {
    Path config = dir.resolve("config.yaml");
    Files.copy(Path.of("..", "examples", "quickstart.yaml"), config);
    List<String> cmd = List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx64m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
        "-cp", System.getProperty("java.class.path"), Main.class.getName(), "serve",
        "--config", config.toString(), "--xds-port", "0", "--http-port", "0",
        "--bind", "127.0.0.1", "--log-level", "warn");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    List<String> output = Collections.synchronizedList(new ArrayList<>());
    Thread reader = new Thread(() -> {
      try (BufferedReader out = new BufferedReader(
          new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = out.readLine()) != null; ) {
          output.add(line);
        }
      } catch (java.io.IOException e) {
        // the process ended
      }
    }, "serve-output");
    reader.setDaemon(true);
    reader.start();
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      while (output.stream().noneMatch(l -> l.contains("serving xDS on"))) {
        assertThat(p.isAlive()).as("serve started; " + output).isTrue();
        assertThat(System.nanoTime()).as("serve's start line; " + output).isLessThan(deadline);
        java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
      }
      // A config file larger than the whole heap: the watcher's reload cannot read it.
      Path next = dir.resolve(".next.yaml");
      try (OutputStream out = Files.newOutputStream(next)) {
        byte[] line = ("#" + "x".repeat(1022) + "\n").getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < 96 * 1024; i++) { // 96 MiB
          out.write(line);
        }
      }
      Files.move(next, config, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the server exited; " + output).isTrue();
      assertThat(p.exitValue()).as(String.join("\n", output))
          .isEqualTo(dev.meridian.internal.config.CoreThreads.FATAL_EXIT);
      reader.join(TimeUnit.SECONDS.toMillis(10));
      assertThat(output).anySatisfy(l -> assertThat(l)
          .startsWith("meridian: fatal: java.lang.OutOfMemoryError")
          .contains("meridian-config-watcher", "supervisor restarts"));
    } finally {
      p.destroyForcibly();
      p.waitFor(30, TimeUnit.SECONDS);
    }
  }
}
