package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A directory reload reads only the files that changed (issue 23): a file is known unchanged by
 * its stamp (size, modification time, inode, link target), as git's index knows it, and a file
 * modified too close to its last read to trust the stamp is read again.
 */
class ChangedFilesReadTest {
  @TempDir Path dir;

  private static final FileTime LONG_AGO = FileTime.from(Instant.now().minusSeconds(60));

  @Test
  void aFileWhoseStampIsUnchangedIsNotReadAgain() throws Exception {
    Path a = write("a.yaml", "resources: []\n", LONG_AGO);
    Path b = write("b.yaml", "groups: []\n", LONG_AGO);
    ConfigLoader.Contents first = ConfigLoader.read(dir);
    // Other bytes of the same size under the same stamp: only a read could see them.
    write("a.yaml", "resources: {}\n", LONG_AGO);
    Files.writeString(b, "groups: [ ]\n");
    ConfigLoader.Contents second = ConfigLoader.read(dir, first);
    assertThat(second.bytes().get(a)).isSameAs(first.bytes().get(a));
    assertThat(new String(second.bytes().get(b))).isEqualTo("groups: [ ]\n");
    assertThat(second.digest()).isNotEqualTo(first.digest());
  }

  @Test
  void aFileModifiedWithinAClockTickOfItsReadIsReadAgainThoughItsStampIsTheSame() throws Exception {
    Path a = write("a.yaml", "resources: []\n", null); // modified just now, then read at once
    ConfigLoader.Contents first = ConfigLoader.read(dir);
    Files.writeString(a, "resources: {}\n");
    Files.setLastModifiedTime(a, Files.getLastModifiedTime(a)); // as a same-tick write leaves it
    ConfigLoader.FileStamp stamp = ConfigLoader.FileStamp.of(a);
    ConfigLoader.FileRead was = first.reads().get(a);
    // The same stamp as at the first read is possible within one tick; the read is still due.
    ConfigLoader.Contents forged = new ConfigLoader.Contents(first.files(), first.bytes(),
        first.unreadable(), java.util.Map.of(a, new ConfigLoader.FileRead(stamp,
            stamp.modifiedNanos() + ConfigLoader.RACY_NANOS / 2, was.bytes())));
    assertThat(new String(ConfigLoader.read(dir, forged).bytes().get(a)))
        .isEqualTo("resources: {}\n");
  }

  @Test
  void aFileReadAgainWithinAClockTickThatDidNotChangeKeepsItsBytesAndDigest() throws Exception {
    // Over 64 KiB: compared through more than one buffer.
    Path a = write("a.yaml", YamlOutlineTest.fleet(400, -1), null); // just written: racy
    ConfigLoader.Contents first = ConfigLoader.read(dir);
    byte[] digest = first.digest();
    ConfigLoader.Contents second = ConfigLoader.read(dir, first);
    // The watcher reads every reload's file twice: the second read costs no new copy.
    assertThat(second.bytes().get(a)).isSameAs(first.bytes().get(a));
    assertThat(second.reads().get(a).digest()).isSameAs(first.reads().get(a).digest());
    assertThat(second.digest()).isEqualTo(digest);
    // ...and is still a read: one more changed byte of the same size is seen.
    byte[] changed = first.bytes().get(a).clone();
    changed[changed.length - 2] ^= 1;
    Files.write(a, changed);
    Files.setLastModifiedTime(a, FileTime.from(second.reads().get(a).stamp().modifiedNanos(),
        java.util.concurrent.TimeUnit.NANOSECONDS)); // the same stamp, as within one tick
    assertThat(ConfigLoader.read(dir, second).bytes().get(a)).isEqualTo(changed);
  }

  @Test
  void sameBytesComparesEveryByteAndTheLength() throws Exception {
    byte[] big = new byte[200_000];
    new java.util.Random(7).nextBytes(big);
    Path f = dir.resolve("f");
    Files.write(f, big);
    assertThat(ConfigLoader.sameBytes(f, big)).isTrue();
    assertThat(ConfigLoader.sameBytes(f, java.util.Arrays.copyOf(big, big.length - 1))).isFalse();
    assertThat(ConfigLoader.sameBytes(f, java.util.Arrays.copyOf(big, big.length + 1))).isFalse();
    for (int at : new int[] {0, 65_535, 65_536, big.length - 1}) {
      byte[] other = big.clone();
      other[at] ^= 1;
      assertThat(ConfigLoader.sameBytes(f, other)).as("byte %d", at).isFalse();
    }
    Files.write(f, new byte[0]);
    assertThat(ConfigLoader.sameBytes(f, new byte[0])).isTrue();
    assertThat(ConfigLoader.sameBytes(f, new byte[1])).isFalse();
  }

  @Test
  void aFileIsBlankExactlyWhenItsTextIsBlank() {
    for (String text : new String[] {"", " ", " \n\t\r\f\u000B", "\u001C\u001F", "\u3000\u2028 ",
        "\u00A0", "  resources: []", "\n\n#", "\u3000x", "é", " \u0085"}) {
      byte[] b = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
      assertThat(Emptying.blank(b)).as("%s", text.codePoints().boxed().toList())
          .isEqualTo(text.isBlank());
    }
  }

  @Test
  void aFileRenamedIntoPlaceIsReadAgainThoughSizeAndTimeAreTheSame() throws Exception {
    Path a = write("a.yaml", "resources: []\n", LONG_AGO);
    ConfigLoader.Contents first = ConfigLoader.read(dir);
    Path next = write(".next", "resources: {}\n", LONG_AGO);
    Files.move(next, a, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    assertThat(new String(ConfigLoader.read(dir, first).bytes().get(a)))
        .isEqualTo("resources: {}\n");
  }

  @Test
  void aDirectoryReloadWithOneChangedFileLoadsTheSameAsAFreshRead() throws Exception {
    for (int i = 0; i < 5; i++) {
      write("f" + i + ".yaml", YamlOutlineTest.fleet(20, -1).replace("c-", "f" + i + "-c-"),
          LONG_AGO);
    }
    ConfigLoader loader = new ConfigLoader();
    ConfigLoader.Contents first = ConfigLoader.read(dir);
    loader.load(first);
    write("f3.yaml", YamlOutlineTest.fleet(20, 7).replace("c-", "f3-c-"), null);
    ConfigLoader.Contents second = ConfigLoader.read(dir, first);
    for (int i = 0; i < 5; i++) {
      Path f = dir.resolve("f" + i + ".yaml");
      if (i != 3) {
        assertThat(second.bytes().get(f)).isSameAs(first.bytes().get(f));
      }
    }
    long built = loader.resourcesSerialized();
    var reloaded = loader.load(second).config();
    assertThat(loader.resourcesSerialized() - built).isEqualTo(1);
    var fresh = new ConfigLoader().load(ConfigLoader.read(dir)).config();
    assertThat(reloaded.defaults().get(dev.meridian.xds.ResourceType.CLUSTER).versionMap())
        .isEqualTo(fresh.defaults().get(dev.meridian.xds.ResourceType.CLUSTER).versionMap());
  }

  private Path write(String name, String text, FileTime modified) throws Exception {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    if (modified != null) {
      Files.setLastModifiedTime(p, modified);
    }
    return p;
  }
}
