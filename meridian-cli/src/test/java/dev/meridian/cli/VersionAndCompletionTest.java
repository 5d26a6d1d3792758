package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.meridian.internal.server.BuildInfo;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code meridian version}, {@code --version} and {@code meridian completion} (issue 24). */
class VersionAndCompletionTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    out.reset();
    err.reset();
    return GetCommandTest.run(out, err, args);
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void versionPrintsTheBuildVersionAndCommit() {
    assertThat(run("version")).isZero();
    BuildInfo b = BuildInfo.current();
    // The pom's version, filtered in at build time, and the commit from git.properties.
    assertThat(b.version()).matches("\\d+\\.\\d+\\.\\d+.*");
    assertThat(b.commit()).matches("[0-9a-f]{40}|unknown");
    assertThat(out()).isEqualTo("meridian " + b.version() + "\ncommit " + b.commit() + "\n");
    String lines = out();
    assertThat(run("--version")).isZero();
    assertThat(out()).isEqualTo(lines);
  }

  @Test
  void versionAsJsonIsWhatSlashVersionServes() {
    assertThat(run("version", "-o", "json")).isZero();
    JsonObject o = JsonParser.parseString(out()).getAsJsonObject();
    assertThat(o.keySet()).containsExactly("version", "commit");
    assertThat(o.get("version").getAsString()).isEqualTo(BuildInfo.current().version());
    assertThat(out().trim()).isEqualTo(BuildInfo.current().json());
  }

  @Test
  void completionBashCompletesTheSubcommandsTheirOptionsAndTypes() {
    assertThat(run("completion", "bash")).isZero();
    String script = out();
    assertThat(script).startsWith("#!/usr/bin/env bash").contains("complete -F _complete_meridian");
    for (String sub : new String[] {"serve", "get", "watch", "resolve", "status", "bootstrap",
        "validate", "apply", "export", "version", "completion"}) {
      assertThat(script).as(sub).contains(" " + sub);
    }
    assertThat(script).contains("--server").contains("--output")
        .contains("clusters").contains("extension-configs") // get's first word
        .contains("wide"); // -o values
  }

  /** The script is valid bash: sourced, it registers the completion function for meridian. */
  @Test
  void completionBashCanBeSourced() throws Exception {
    assertThat(run("completion", "bash")).isZero();
    java.nio.file.Path script = java.nio.file.Files.createTempFile("meridian-completion", ".bash");
    try {
      java.nio.file.Files.writeString(script, out());
      Process p = new ProcessBuilder("bash", "-c", "source " + script + " && complete -p meridian")
          .redirectErrorStream(true).start();
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor()).as(output).isZero();
      assertThat(output).contains("_complete_meridian").contains("meridian");
    } finally {
      java.nio.file.Files.deleteIfExists(script);
    }
  }

  @Test
  void completionZshIsTheScriptThatLoadsBashcompinitUnderZsh() {
    assertThat(run("completion", "zsh")).isZero();
    assertThat(out()).contains("ZSH_VERSION").contains("bashcompinit")
        .contains("complete -F _complete_meridian");
  }

  @Test
  void anotherShellIsAUsageError() {
    assertThat(run("completion", "fish")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("'fish' is not one of bash, zsh");
  }
}
