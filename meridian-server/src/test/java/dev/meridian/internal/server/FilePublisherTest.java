package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.protocol.NodeMatcher;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.Snapshot;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25, "Nothing lost" (docs/reliability.md): what a publisher killed mid-write left is removed
 * by the next one's first publish, and only names of the publisher's own making are touched. The
 * kill itself is in meridian-cli's {@code NothingLostTest}. And the publish dir as docs/security.md
 * has it: owner-only modes, no Secrets unless asked for, no link followed, no size cap; what
 * cannot be written is reported, never thrown.
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

  static final String WITH_SECRET = """
      resources:
        - { "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: backend }
        - "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret
          name: server-cert
          tls_certificate: { private_key: { inline_string: "THE PRIVATE KEY" } }
      """;

  ServedConfig load(String yaml) throws Exception {
    Path file = Files.writeString(outside.resolve("config-" + System.nanoTime() + ".yaml"), yaml);
    return new ConfigLoader().load(file).config();
  }

  /** The errors of each publish, as the hub hears them. */
  final List<List<String>> reported = new ArrayList<>();

  FilePublisher publisher(Path to, boolean secrets) {
    return new FilePublisher(to, FilePublisher.Format.YAML, null, secrets,
        (d, errors) -> reported.add(errors));
  }

  static String mode(Path p) throws Exception {
    return PosixFilePermissions.toString(
        Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
  }

  @Test
  void publishedFilesAreOwnerOnlyWhateverTheUmaskAndModesLooserBeforeAreTightened()
      throws Exception {
    Path publish = dir.resolve("publish");
    FilePublisher publisher = publisher(publish, false);
    assertThat(publisher.publish(load(WITH_SECRET))).isTrue();

    Path group = publish.resolve("default");
    Path clusters = group.resolve("clusters.yaml");
    assertThat(mode(publish)).isEqualTo("rwx------");
    assertThat(mode(group)).isEqualTo("rwx------");
    try (var s = Files.list(group)) {
      for (Path f : s.toList()) {
        assertThat(mode(f)).as(f.toString()).isEqualTo("rw-------");
      }
    }
    // As a permissive umask (or an older version) would have left them: the next publish, with
    // nothing to rewrite, sets the modes again.
    Files.setPosixFilePermissions(group, PosixFilePermissions.fromString("rwxrwxrwx"));
    Files.setPosixFilePermissions(clusters, PosixFilePermissions.fromString("rw-rw-rw-"));
    long modified = Files.getLastModifiedTime(clusters).toMillis();
    assertThat(publisher.publish(load(WITH_SECRET))).isTrue();
    assertThat(mode(group)).isEqualTo("rwx------");
    assertThat(mode(clusters)).isEqualTo("rw-------");
    assertThat(Files.getLastModifiedTime(clusters).toMillis()).isEqualTo(modified);
    assertThat(reported).containsOnly(List.of());
  }

  @Test
  void secretsArePublishedOnlyWhenAskedFor() throws Exception {
    Path publish = dir.resolve("publish");
    Path secrets = publish.resolve("default").resolve("secrets.yaml");
    publisher(publish, true).publish(load(WITH_SECRET));
    assertThat(secrets).content().contains("THE PRIVATE KEY");
    assertThat(mode(secrets)).isEqualTo("rw-------");

    // Without --publish-secrets: no Secrets file, and the one written before is removed.
    assertThat(publisher(publish, false).publish(load(WITH_SECRET))).isTrue();
    assertThat(secrets).doesNotExist();
    assertThat(publish.resolve("default").resolve("clusters.yaml")).content().contains("backend");
    try (var s = Files.walk(publish)) {
      for (Path f : s.filter(Files::isRegularFile).toList()) {
        assertThat(f).content().doesNotContain("PRIVATE KEY");
      }
    }
  }

  @Test
  void aGroupDirectoryThatIsASymlinkIsNotFollowed() throws Exception {
    Path publish = Files.createDirectories(dir.resolve("publish"));
    Path elsewhere = Files.createDirectories(outside.resolve("elsewhere"));
    Files.createSymbolicLink(publish.resolve("default"), elsewhere);

    assertThat(publisher(publish, true).publish(load(WITH_SECRET))).isFalse();

    try (var s = Files.list(elsewhere)) {
      assertThat(s.toList()).as("written through the link").isEmpty();
    }
    assertThat(publish.resolve("default")).isSymbolicLink();
    assertThat(reported).hasSize(1);
    assertThat(reported.get(0)).singleElement().asString()
        .contains(publish.resolve("default").toString(), "symbolic link", "not followed");
  }

  @Test
  void aPublishedFileThatIsASymlinkIsNotFollowedNorReplaced() throws Exception {
    Path publish = dir.resolve("publish");
    FilePublisher publisher = publisher(publish, false);
    publisher.publish(load(WITH_SECRET));
    Path clusters = publish.resolve("default").resolve("clusters.yaml");
    Path target = Files.writeString(outside.resolve("target.yaml"), "someone else's");
    Files.delete(clusters);
    Files.createSymbolicLink(clusters, target);
    // A link at the temporary name is not written through either.
    Path tmpTarget = Files.writeString(outside.resolve("tmp-target"), "someone else's");
    Files.createSymbolicLink(FilePublisher.temporary(publish.resolve("default")
        .resolve("listeners.yaml")), tmpTarget);

    // A new cluster (clusters.yaml would be rewritten) and a listener (listeners.yaml too).
    ServedConfig changed = load(WITH_SECRET.replace("name: backend }", "name: backend-2 }")
        + "  - { \"@type\": type.googleapis.com/envoy.config.listener.v3.Listener, name: l,"
        + " address: { socket_address: { address: 0.0.0.0, port_value: 1 } } }\n");
    assertThat(publisher.publish(changed)).isFalse();

    assertThat(target).hasContent("someone else's");
    assertThat(tmpTarget).hasContent("someone else's");
    assertThat(clusters).isSymbolicLink();
    assertThat(publish.resolve("default").resolve("listeners.yaml")).content().contains("name: l");
    assertThat(reported.get(reported.size() - 1)).singleElement().asString()
        .contains(clusters.toString(), "symbolic link", "not written");
  }

  @Test
  void aConfigOfFifteenThousandClustersLoadsAndIsPublishedAsYaml() throws Exception {
    // Past snakeyaml's default cap of 3 MiB on what it reads.
    StringBuilder yaml = new StringBuilder("resources:\n");
    for (int i = 0; i < 15_000; i++) {
      yaml.append(("  - { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster,"
          + " name: cluster-%05d, type: EDS, connect_timeout: 1s, eds_cluster_config:"
          + " { service_name: service-%05d-of-the-fleet, eds_config: { ads: {}, resource_api_version: V3 } } }\n")
          .formatted(i, i));
    }
    Path publish = dir.resolve("publish");
    // The config loader has no such cap either: the file is past it too.
    assertThat(yaml.length()).isGreaterThan(3 * 1024 * 1024);

    assertThat(publisher(publish, false).publish(load(yaml.toString()))).isTrue();

    Path clusters = publish.resolve("default").resolve("clusters.yaml");
    assertThat(Files.size(clusters)).isGreaterThan(3L * 1024 * 1024);
    assertThat(Files.readString(clusters)).contains("name: cluster-14999");
    assertThat(reported).containsExactly(List.of());
  }
}
