package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code meridian} launcher's JVM flags (docs/operations.md, "Fleet tuning"), run against a
 * stand-in {@code java} that prints its arguments: which flags, for which command, JDK and CPU
 * count, in which order. Only {@code serve --fleet} gets them (issue 18). A stand-in {@code mvn}
 * keeps the launcher from building.
 */
class LauncherTest {
  @TempDir Path bin;
  private Path launcher;

  @BeforeEach
  void standIns() throws IOException {
    launcher = Path.of("..", "meridian").toAbsolutePath().normalize();
    assumeTrue(Files.isExecutable(Path.of("/bin/bash")), "the launcher is a bash script");
    assumeTrue(Files.exists(launcher.getParent().resolve("meridian-cli/target/meridian.jar")),
        "meridian.jar is packaged by a reactor build (mvn verify)");
    script("mvn", "exit 0");
    script("java", """
        if [ "$1" = "-version" ]; then
          touch "$(dirname "$0")/java-version-asked"
          echo "openjdk version \\"$FAKE_JDK.0.1\\" 2024-01-01" >&2; exit 0
        fi
        for a in "$@"; do echo "$a"; done""");
    script("nproc", "echo \"$FAKE_NPROC\"");
  }

  private void script(String name, String body) throws IOException {
    Path p = bin.resolve(name);
    Files.writeString(p, "#!/bin/bash\n" + body + "\n", StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  /** The arguments the launcher hands to java for {@code args}, on this JDK and CPU count. */
  private List<String> javaArgs(int jdk, int cpus, Map<String, String> env, String... args)
      throws Exception {
    List<String> cmd = new ArrayList<>(List.of("/bin/bash", launcher.toString()));
    cmd.addAll(Arrays.asList(args));
    // stderr aside: "building..." when sources are newer than the jar (the stand-in mvn skips it)
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD);
    pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
    pb.environment().put("FAKE_JDK", Integer.toString(jdk));
    pb.environment().put("FAKE_NPROC", Integer.toString(cpus));
    pb.environment().remove("MERIDIAN_JAVA_OPTS");
    pb.environment().remove("MERIDIAN_FLEET_FLAGS");
    pb.environment().putAll(env);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out.lines().toList();
  }

  private static List<String> jit() {
    return LoadGenerator.fleetJit("dev.meridian");
  }

  @Test
  void aPlainServeGetsNoJvmFlagsAndNoVersionProbe() throws Exception {
    // Issue 18: the fleet flags slowed every start on 2 cores; only `serve --fleet` gets them.
    List<String> args = javaArgs(17, 2, Map.of("MERIDIAN_JAVA_OPTS", "-Xmx4g"), "serve",
        "--config", "x.yaml");

    // Every start exits on OutOfMemoryError, so that a supervisor restarts it.
    assertThat(args).containsExactly("-XX:+ExitOnOutOfMemoryError", "-Xmx4g", "-jar", jar(),
        "serve", "--config", "x.yaml");
    assertThat(Files.exists(bin.resolve("java-version-asked"))).isFalse();
  }

  @Test
  void serveFleetOnJdk17WithTwoCpusGetsTheG1AndJitFlagsBeforeTheUsersOwn() throws Exception {
    List<String> args = javaArgs(17, 2, Map.of("MERIDIAN_JAVA_OPTS", "-Xmx4g"), "serve",
        "--config", "x.yaml", "--fleet");

    List<String> expected = new ArrayList<>(List.of("-XX:+ExitOnOutOfMemoryError"));
    expected.addAll(LoadGenerator.FLEET_GC);
    expected.addAll(jit());
    expected.addAll(LoadGenerator.FLEET_C2);
    expected.add("-Xmx4g"); // the user's flags come last, so they win
    expected.add("-jar");
    assertThat(args.subList(0, expected.size())).isEqualTo(expected);
    // --fleet goes on to the server too, which accepts it (java -jar meridian.jar serve --fleet)
    assertThat(args.subList(expected.size() + 1, args.size()))
        .containsExactly("serve", "--config", "x.yaml", "--fleet");
  }

  @Test
  void jdk21HasNoG1RefinementFlagsButTheJitFlags() throws Exception {
    List<String> args = javaArgs(21, 2, Map.of(), "serve", "--fleet");

    assertThat(args).doesNotContainAnyElementsOf(LoadGenerator.FLEET_GC);
    assertThat(args).containsSubsequence(jit()).containsAll(LoadGenerator.FLEET_C2);
  }

  @Test
  void moreThanEightCpusKeepTheJvmsOwnCompilerCount() throws Exception {
    List<String> args = javaArgs(17, 16, Map.of(), "serve", "--fleet");

    assertThat(args).containsSubsequence(jit()).doesNotContainAnyElementsOf(LoadGenerator.FLEET_C2);
  }

  @Test
  void otherCommandsAndTheOptOutGetNoneOfTheFlags() throws Exception {
    for (List<String> args : List.of(javaArgs(17, 2, Map.of(), "validate", "--fleet"),
        javaArgs(17, 2, Map.of(), "serve", "--", "--fleet"),
        javaArgs(17, 2, Map.of("MERIDIAN_FLEET_FLAGS", "off"), "serve", "--fleet"))) {
      assertThat(args).startsWith("-XX:+ExitOnOutOfMemoryError", "-jar");
    }
    // The opt-out drops the JVM flags only: the server still gets --fleet.
    assertThat(javaArgs(17, 2, Map.of("MERIDIAN_FLEET_FLAGS", "off"), "serve", "--fleet"))
        .endsWith("serve", "--fleet");
  }

  @Test
  void buildOutputNewerThanTheJarDoesNotMakeItBuild() throws Exception {
    // Issue 18: after a reactor build the bench's generated sources (in target/) are newer than
    // meridian.jar, and the launcher took them for changed sources: the next start built first.
    script("mvn", "touch \"$(dirname \"$0\")/mvn-ran\"");
    javaArgs(17, 2, Map.of(), "validate");
    assumeFalse(Files.exists(bin.resolve("mvn-ran")), "sources are newer than meridian.jar");
    Path generated = Path.of("target", "launcher-test", "Generated.java"); // this module's
    Files.createDirectories(generated.getParent());
    Files.writeString(generated, "class Generated {}");
    Files.setLastModifiedTime(generated, FileTime.from(Instant.now().plusSeconds(60)));
    try {
      javaArgs(17, 2, Map.of(), "validate");
      assertThat(Files.exists(bin.resolve("mvn-ran"))).isFalse();
    } finally {
      Files.delete(generated);
    }
  }

  private String jar() {
    return launcher.getParent().resolve("meridian-cli/target/meridian.jar").toString();
  }
}
