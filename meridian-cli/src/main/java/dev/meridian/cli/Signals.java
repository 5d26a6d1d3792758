package dev.meridian.cli;

/**
 * SIGTERM and SIGINT run a graceful shutdown and let {@code serve} return normally, so that the
 * process exits 0 (a JVM killed by a signal through its shutdown hooks exits 143 or 130, which
 * orchestrators report as a failure).
 */
final class Signals {
  private Signals() {}

  static void onTermination(Runnable shutdown) {
    for (String name : new String[] {"TERM", "INT"}) {
      try {
        sun.misc.Signal.handle(new sun.misc.Signal(name),
            s -> new Thread(shutdown, "meridian-sig" + name.toLowerCase(java.util.Locale.ROOT)).start());
      } catch (IllegalArgumentException | UnsupportedOperationException e) {
        // Not available on this platform/JVM: the shutdown hook still closes gracefully.
      }
    }
  }
}
