package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.protocol.ServedConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25, "Nothing lost" (docs/reliability.md): what a publisher killed mid-write left is removed
 * by the next one's first publish, and only names of the publisher's own making are touched. The
 * kill itself is in meridian-cli's {@code NothingLostTest}.
 */
class FilePublisherTest {
  @TempDir Path dir;

  @Test
  void theFirstPublishRemovesTemporaryFilesAndHalfRemovedGroupsAKilledPublisherLeft()
      throws Exception {
    Path group = Files.createDirectories(dir.resolve("default"));
    Path tmp = Files.writeString(group.resolve(".clusters.yaml.tmp"), "resources:\n  - {");
    Path tmpJson = Files.writeString(group.resolve(".listeners.json.tmp"), "{");
    Path users = Files.writeString(group.resolve(".notes.tmp"), "not the publisher's");
    Path removing = Files.createDirectories(dir.resolve(".canary.removing"));
    Files.writeString(removing.resolve("clusters.yaml"), "x");

    new FilePublisher(dir, FilePublisher.Format.YAML).publish(ServedConfig.empty());

    assertThat(tmp).doesNotExist();
    assertThat(tmpJson).doesNotExist();
    assertThat(removing).doesNotExist();
    assertThat(users).exists();
    assertThat(group.resolve("clusters.yaml")).exists();
    assertThat(FilePublisher.temporary(group.resolve("clusters.yaml")))
        .isEqualTo(tmp).doesNotExist();
  }

  @Test
  void aGroupNoLongerServedGoesWithAllItsFilesAndLeavesNothingHidden() throws Exception {
    Path canary = Files.createDirectories(dir.resolve("canary"));
    Files.writeString(canary.resolve("clusters.yaml"), "x");
    Files.writeString(canary.resolve("listeners.yaml"), "x");

    new FilePublisher(dir, FilePublisher.Format.YAML).publish(ServedConfig.empty());

    try (var s = Files.list(dir)) {
      assertThat(s.map(p -> p.getFileName().toString())).containsExactly("default");
    }
  }
}
