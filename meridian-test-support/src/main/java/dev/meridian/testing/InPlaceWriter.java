package dev.meridian.testing;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * How a tool rewrites a config file in place (truncate, then write), for the tests of issue 18 §2:
 * a watcher must never apply such a file half-written. For a file replaced whole, see
 * {@link ConfigFiles#replaceByRename}.
 */
public enum InPlaceWriter {
  /** Truncate and write at once ({@code Files.writeString}, {@code echo ... > file}). */
  FAST,
  /**
   * Truncate, then 10 writes 20 ms apart, each ending at a line end (valid YAML so far): a tool
   * that renders and writes as it goes.
   */
  SLOW,
  /**
   * {@code render > file}: the shell truncates, the program writes it all 300 ms later. The
   * empty file outlasts the quiet period; the emptying guard is what keeps it from clients.
   */
  REDIRECTED;

  /** Rewrites {@code file} in place with {@code text} (ASCII), the way this writer does. */
  public void write(Path file, String text) throws IOException {
    if (this == FAST) {
      Files.writeString(file, text);
      return;
    }
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      if (this == REDIRECTED) {
        pace(TimeUnit.MILLISECONDS.toNanos(300));
        writeAll(ch, ByteBuffer.wrap(bytes));
        return;
      }
      int from = 0;
      for (int cut : cuts(text, 10)) {
        writeAll(ch, ByteBuffer.wrap(bytes, from, cut - from));
        from = cut;
        if (cut < bytes.length) {
          pace(TimeUnit.MILLISECONDS.toNanos(20));
        }
      }
    }
  }

  /** Ends of at most {@code n} pieces of {@code text}, at line ends: every prefix is valid YAML. */
  public static List<Integer> cuts(String text, int n) {
    List<Integer> cuts = new ArrayList<>();
    for (int i = 1; i < n; i++) {
      int at = text.indexOf('\n', text.length() * i / n);
      if (at >= 0 && (cuts.isEmpty() || at + 1 > cuts.get(cuts.size() - 1))) {
        cuts.add(at + 1);
      }
    }
    cuts.add(text.length()); // ASCII: chars are bytes
    return cuts;
  }

  private static void writeAll(FileChannel ch, ByteBuffer piece) throws IOException {
    while (piece.hasRemaining()) {
      ch.write(piece);
    }
  }

  /** The writer's own pace (the behaviour under test, not a wait for a condition). */
  private static void pace(long nanos) {
    long until = System.nanoTime() + nanos;
    for (long left = nanos; left > 0; left = until - System.nanoTime()) {
      LockSupport.parkNanos(left);
    }
  }
}
