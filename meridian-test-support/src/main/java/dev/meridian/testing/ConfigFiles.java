package dev.meridian.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** Config files replaced the way editors and config management tools replace them. */
public final class ConfigFiles {
  private ConfigFiles() {}

  /**
   * Replaces {@code file} with {@code text} atomically: writes a hidden temporary file beside it
   * (a config directory's loader skips it), then renames it over {@code file}. A watcher never sees
   * the file half-written. Returns {@link System#nanoTime()} taken just before the rename, for
   * tests that time what follows it.
   */
  public static long replaceByRename(Path file, String text) throws IOException {
    Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
    Files.writeString(tmp, text);
    long renamed = System.nanoTime();
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return renamed;
  }
}
