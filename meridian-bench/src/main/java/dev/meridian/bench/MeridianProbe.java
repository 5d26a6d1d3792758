package dev.meridian.bench;

import dev.meridian.protocol.SerializationCounter;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * Runs the unmodified {@code meridian} command ({@code dev.meridian.cli.Main}, from
 * {@code meridian.jar}, which comes first on the class path) and answers {@code count} on stdin
 * with {@link SerializationCounter#count()}, so the load generator can read the server's
 * serialization counter across the process boundary. Exits on stdin EOF.
 */
public final class MeridianProbe {
  private MeridianProbe() {}

  public static void main(String[] args) throws Exception {
    Thread t = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(
          new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          if (line.trim().equals("count")) {
            System.out.println("count " + SerializationCounter.count());
            System.out.flush();
          }
        }
      } catch (Exception e) {
        // fall through: exit
      }
      System.exit(0);
    }, "probe-stdin");
    t.setDaemon(true);
    t.start();
    Class.forName("dev.meridian.cli.Main").getMethod("main", String[].class)
        .invoke(null, (Object) args);
  }
}
