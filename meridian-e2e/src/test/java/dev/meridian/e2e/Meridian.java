package dev.meridian.e2e;

import dev.meridian.server.MeridianServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Meridian run as {@code meridian serve} runs it: {@link MeridianServer} over a config file on disk,
 * on ephemeral loopback ports, hot-reloading on edits. Also records the NACKs Meridian logs.
 */
final class Meridian implements AutoCloseable {
  private final Path file;
  private final Logger xdsLog = Logger.getLogger("dev.meridian.server.xds");
  private final NackRecorder nacks = new NackRecorder();
  private MeridianServer server;
  private int xdsPort;

  private Meridian(Path file) {
    this.file = file;
    xdsLog.addHandler(nacks);
  }

  static Meridian start(Path dir, Config config) throws Exception {
    Meridian m = new Meridian(dir.resolve("meridian.yaml"));
    m.write(config);
    m.startServer(0);
    return m;
  }

  /** Replaces the config file atomically, as editors and config management tools do. */
  void write(Config config) {
    try {
      Path tmp = file.resolveSibling(".meridian.yaml.tmp");
      Files.writeString(tmp, config.render());
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void startServer(int port) throws Exception {
    server = new MeridianServer(new MeridianServer.Options(file, "127.0.0.1", port, 0, 1000)).start();
    xdsPort = server.xdsPort();
  }

  /** Stops Meridian and starts a new one on the same xDS port and file (a process restart). */
  void restart() throws Exception {
    server.close();
    startServer(xdsPort);
  }

  int xdsPort() {
    return xdsPort;
  }

  MeridianServer server() {
    return server;
  }

  /** The NACKs Meridian has logged so far, as "node type message" lines. */
  List<String> nacks() {
    return List.copyOf(nacks.lines);
  }

  @Override
  public void close() {
    xdsLog.removeHandler(nacks);
    if (server != null) {
      server.close();
    }
  }

  private static final class NackRecorder extends Handler {
    final List<String> lines = new CopyOnWriteArrayList<>();

    @Override
    public void publish(LogRecord r) {
      Object[] p = r.getParameters();
      if (r.getMessage() != null && r.getMessage().startsWith("NACK") && p != null && p.length >= 5) {
        lines.add(p[0] + " " + p[1] + " " + p[4]);
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }
}
