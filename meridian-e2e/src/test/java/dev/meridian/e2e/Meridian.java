package dev.meridian.e2e;

import dev.meridian.internal.server.MeridianServer;
import dev.meridian.testing.ConfigFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
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
  private java.util.function.UnaryOperator<MeridianServer.Options> options = o -> o;

  private Meridian(Path file) {
    this.file = file;
    xdsLog.addHandler(nacks);
  }

  static Meridian start(Path dir, Config config) throws Exception {
    return start(dir, config, null);
  }

  /** Serving xDS over {@code tls} (issue 20): TLS, and with a client CA, mTLS. */
  static Meridian start(Path dir, Config config, MeridianServer.Options.Tls tls) throws Exception {
    return startWith(dir, config, o -> o.withTls(tls));
  }

  /** With {@code serve}'s options as {@code options} sets them (e.g. {@code --authority}). */
  static Meridian startWith(Path dir, Config config,
      java.util.function.UnaryOperator<MeridianServer.Options> options) throws Exception {
    Meridian m = new Meridian(dir.resolve("meridian.yaml"));
    m.options = options;
    m.write(config);
    m.startServer(0);
    return m;
  }

  /** Replaces the config file atomically, as editors and config management tools do. */
  void write(Config config) {
    try {
      ConfigFiles.replaceByRename(file, config.render());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void startServer(int port) throws Exception {
    server = new MeridianServer(options.apply(
        new MeridianServer.Options(file, "127.0.0.1", port, 0, 1000))).start();
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

    private static final java.util.regex.Pattern KV =
        java.util.regex.Pattern.compile("(\\w+)=(\"(?:[^\"\\\\]|\\\\.)*\"|\\S+)");

    /** Meridian logs one structured line per NACK: {@code nack ... node=N type=T ... message="M"}. */
    @Override
    public void publish(LogRecord r) {
      String m = r.getMessage();
      if (m == null || !m.startsWith("nack ")) {
        return;
      }
      java.util.Map<String, String> kv = new java.util.HashMap<>();
      java.util.regex.Matcher x = KV.matcher(m);
      while (x.find()) {
        String v = x.group(2);
        kv.put(x.group(1), v.startsWith("\"") ? v.substring(1, v.length() - 1) : v);
      }
      lines.add(kv.get("node") + " " + kv.get("type") + " " + kv.get("message"));
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }
}
