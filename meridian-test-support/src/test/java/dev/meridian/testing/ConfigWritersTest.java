package dev.meridian.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ConfigWritersTest {
  static final String TEXT = "resources:\n" + "  - { name: a }\n".repeat(25);

  @TempDir Path dir;

  @ParameterizedTest
  @EnumSource(InPlaceWriter.class)
  void eachWriterLeavesTheWholeTextInTheSameFile(InPlaceWriter writer) throws Exception {
    Path file = Files.writeString(dir.resolve("c.yaml"), "old, and longer than nothing\n");
    Object inode = Files.readAttributes(file, "unix:ino").get("ino");
    writer.write(file, TEXT);
    assertThat(Files.readString(file)).isEqualTo(TEXT);
    assertThat(Files.readAttributes(file, "unix:ino").get("ino")).isEqualTo(inode);
  }

  @Test
  void piecesEndAtLineEnds() {
    List<Integer> cuts = InPlaceWriter.cuts(TEXT, 10);
    assertThat(cuts).hasSizeBetween(2, 10).isSorted().doesNotHaveDuplicates();
    assertThat(cuts.get(cuts.size() - 1)).isEqualTo(TEXT.length());
    cuts.forEach(c -> assertThat(TEXT.charAt(c - 1)).isEqualTo('\n'));
  }

  @Test
  void replaceByRenameLeavesOnlyTheNewContent() throws Exception {
    Path file = Files.writeString(dir.resolve("c.yaml"), "old\n");
    long before = System.nanoTime();
    long renamed = ConfigFiles.replaceByRename(file, TEXT);
    assertThat(renamed).isBetween(before, System.nanoTime());
    assertThat(Files.readString(file)).isEqualTo(TEXT);
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files).containsExactly(file);
    }
  }
}
