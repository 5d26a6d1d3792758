package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.protocol.NodeMatcher;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.Snapshot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25, "Nothing lost" (docs/reliability.md): what a publisher killed mid-write left is removed
 * by the next one's first publish, and only names of the publisher's own making are touched. The
 * kill itself is in meridian-cli's {@code NothingLostTest}.
 */
class FilePublisherTest {
  @TempDir Path dir;
  @TempDir Path outside;

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

  @Test
  void aDirectoryOfTheUsersInThePublishDirIsNeverDeleted() throws Exception {
    // Only a directory holding nothing but published and temporary files is a group of ours.
    Path mine = Files.createDirectories(dir.resolve("mine"));
    Files.writeString(mine.resolve("clusters.yaml"), "x");
    Path notes = Files.writeString(mine.resolve("notes.txt"), "the user's");
    Path nested = Files.createDirectories(dir.resolve("nested").resolve("deeper"));
    Path empty = Files.createDirectories(dir.resolve("lost+found"));
    // A link to a directory of files that look published (a hand-written Envoy file set).
    Path elsewhere = Files.createDirectories(outside.resolve("mine"));
    Files.writeString(elsewhere.resolve("clusters.yaml"), "hand-written");
    Path link = Files.createSymbolicLink(dir.resolve("linked"), elsewhere);

    FilePublisher publisher = new FilePublisher(dir, FilePublisher.Format.YAML);
    publisher.publish(ServedConfig.empty());
    publisher.publish(ServedConfig.empty());

    assertThat(notes).hasContent("the user's");
    assertThat(mine.resolve("clusters.yaml")).exists();
    assertThat(nested).isDirectory();
    assertThat(empty).isDirectory();
    assertThat(elsewhere.resolve("clusters.yaml")).exists(); // not deleted through the link
    assertThat(link).isSymbolicLink();
    assertThat(dir.resolve("default").resolve("clusters.yaml")).exists();
  }

  @Test
  void aGroupStaysWhileSomeoneElsesDirectoryHoldsTheNameItWouldBeRemovedUnder() throws Exception {
    // The hidden name a group is renamed to before it is deleted: never taken from someone else.
    Path canary = Files.createDirectories(dir.resolve("canary"));
    Files.writeString(canary.resolve("clusters.yaml"), "x");
    Path hidden = Files.createDirectories(dir.resolve(".canary.removing"));
    Path notes = Files.writeString(hidden.resolve("notes.txt"), "the user's");
    Path deeper = Files.createDirectories(hidden.resolve("deeper"));

    FilePublisher publisher = new FilePublisher(dir, FilePublisher.Format.YAML);
    publisher.publish(ServedConfig.empty());
    publisher.publish(ServedConfig.empty());

    assertThat(notes).hasContent("the user's");
    assertThat(deeper).isDirectory();
    assertThat(canary.resolve("clusters.yaml")).exists(); // kept: it has nowhere to go
    assertThat(dir.resolve("default").resolve("clusters.yaml")).exists(); // the rest is published

    Files.delete(notes);
    Files.delete(deeper);
    publisher.publish(ServedConfig.empty()); // the name is free (an empty directory): it goes
    assertThat(canary).doesNotExist();
    assertThat(hidden).doesNotExist();
  }

  @Test
  void aGroupWhoseNameIsNoDirectoryNameIsNotPublishedAndNothingIsWrittenOutside() throws Exception {
    Path publishDir = Files.createDirectories(dir.resolve("publish"));
    List<ServedConfig.Group> groups = List.of("../escaped", "a/b", ".hidden", "ok").stream()
        .map(g -> new ServedConfig.Group(g, new NodeMatcher("n-*", null), Snapshot.empty()))
        .toList();

    new FilePublisher(publishDir, FilePublisher.Format.YAML)
        .publish(new ServedConfig(Snapshot.empty(), groups));

    assertThat(dir.resolve("escaped")).doesNotExist();
    try (var s = Files.list(publishDir)) {
      assertThat(s.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("default", "ok");
    }
    assertThat(FilePublisher.isDirectoryName("team-a.v2")).isTrue();
    assertThat(FilePublisher.isDirectoryName("..")).isFalse();
    assertThat(FilePublisher.isDirectoryName("")).isFalse();
    assertThat(FilePublisher.isDirectoryName("a\\b")).isFalse();
  }
}
