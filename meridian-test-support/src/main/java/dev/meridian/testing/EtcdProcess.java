package dev.meridian.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real etcd (Debian's {@code etcd-server} package, binary {@code etcd}) for tests: started on
 * ephemeral loopback ports with a temporary data dir, stopped and deleted by {@link #close}. One
 * member, or a cluster of several ({@link #cluster}). Members can be stopped and started again on
 * the same ports and data, to test outages. Raised transaction limits, as docs/etcd.md asks of
 * production etcd for large applies.
 */
public final class EtcdProcess implements AutoCloseable {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

  /** One member: its ports and data dir, and its process while it runs. */
  public static final class Member {
    final String name;
    final int clientPort;
    final int peerPort;
    final Path dataDir;
    Process process;

    Member(String name, int clientPort, int peerPort, Path dataDir) {
      this.name = name;
      this.clientPort = clientPort;
      this.peerPort = peerPort;
      this.dataDir = dataDir;
    }

    /** {@code 127.0.0.1:PORT}, the member's client address. */
    public String endpoint() {
      return "127.0.0.1:" + clientPort;
    }

    public boolean running() {
      return process != null && process.isAlive();
    }
  }

  /** TLS for clients: the server's certificate and key, and a CA client certificates need. */
  public record Tls(Path cert, Path key, Path clientCa) {}

  private final Path root;
  private final List<Member> members = new ArrayList<>();
  private final Tls tls;

  private EtcdProcess(Path root, int size, Tls tls) {
    this.root = root;
    this.tls = tls;
    for (int i = 0; i < size; i++) {
      members.add(new Member("m" + i, freePort(), freePort(), root.resolve("m" + i)));
    }
  }

  /** Starts one member; fails clearly when {@code etcd} is not installed. */
  public static EtcdProcess start() {
    return cluster(1, null);
  }

  /** Starts one member serving clients over TLS (client certificates required if a CA given). */
  public static EtcdProcess startTls(Tls tls) {
    return cluster(1, tls);
  }

  /** Starts a cluster of {@code size} members and waits until every one is healthy. */
  public static EtcdProcess cluster(int size, Tls tls) {
    // A free port is found by binding and releasing it; another process may take it before etcd
    // binds it (other tests, a parallel build): then the whole cluster starts on fresh ports.
    for (int attempt = 1; ; attempt++) {
      Path root;
      try {
        root = Files.createTempDirectory("meridian-etcd");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      EtcdProcess etcd = new EtcdProcess(root, size, tls);
      try {
        for (Member m : etcd.members) {
          etcd.launch(m);
        }
        for (Member m : etcd.members) {
          etcd.awaitHealthy(m);
        }
        return etcd;
      } catch (RuntimeException e) {
        etcd.close();
        if (attempt >= 3 || e.getMessage() == null
            || !e.getMessage().contains("address already in use")) {
          throw e;
        }
      }
    }
  }

  public List<Member> members() {
    return List.copyOf(members);
  }

  /** Every member's endpoint, comma-separated, as an {@code etcd://} URL lists them. */
  public String endpoints() {
    return String.join(",", members.stream().map(Member::endpoint).toList());
  }

  /** {@code etcd://ENDPOINTS/PREFIX} (or {@code etcds://} under TLS). */
  public String url(String prefix) {
    return (tls == null ? "etcd://" : "etcds://") + endpoints()
        + (prefix.startsWith("/") ? prefix : "/" + prefix);
  }

  /** Stops a member (SIGTERM, then SIGKILL), keeping its data and ports. */
  public void stop(Member m) {
    if (m.process == null) {
      return;
    }
    m.process.destroy();
    try {
      if (!m.process.waitFor(10, TimeUnit.SECONDS)) {
        m.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    m.process = null;
  }

  /** Starts a stopped member again on its ports and data, and waits until it is healthy. */
  public void restart(Member m) {
    launch(m);
    awaitHealthy(m);
  }

  private void launch(Member m) {
    String scheme = tls == null ? "http" : "https";
    List<String> cmd = new ArrayList<>(List.of("etcd",
        "--name", m.name,
        "--data-dir", m.dataDir.toString(),
        "--listen-client-urls", scheme + "://127.0.0.1:" + m.clientPort,
        "--advertise-client-urls", scheme + "://127.0.0.1:" + m.clientPort,
        "--listen-peer-urls", "http://127.0.0.1:" + m.peerPort,
        "--initial-advertise-peer-urls", "http://127.0.0.1:" + m.peerPort,
        "--initial-cluster", String.join(",", members.stream()
            .map(x -> x.name + "=http://127.0.0.1:" + x.peerPort).toList()),
        "--initial-cluster-token", "meridian-test-" + root.getFileName(),
        "--initial-cluster-state", "new",
        "--max-txn-ops", "100000",
        "--max-request-bytes", String.valueOf(64 * 1024 * 1024),
        "--logger", "zap", "--log-level", "warn",
        "--heartbeat-interval", "50", "--election-timeout", "500"));
    if (tls != null) {
      cmd.addAll(List.of("--cert-file", tls.cert().toString(), "--key-file", tls.key().toString()));
      if (tls.clientCa() != null) {
        cmd.addAll(List.of("--client-cert-auth", "--trusted-ca-file", tls.clientCa().toString()));
      }
    }
    try {
      m.process = new ProcessBuilder(cmd).redirectErrorStream(true)
          .redirectOutput(root.resolve(m.name + ".log").toFile()).start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot run etcd (" + e.getMessage() + "): the tests need "
          + "a real etcd; install Debian's etcd-server package (apt-get install etcd-server); "
          + ".ci/run does", e);
    }
  }

  /** Waits until the member answers {@code /health} (plaintext) or accepts TLS connections. */
  private void awaitHealthy(Member m) {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (!m.process.isAlive()) {
        throw new IllegalStateException("etcd " + m.name + " exited: " + log(m));
      }
      if (healthy(m)) {
        return;
      }
      try {
        Thread.sleep(50); // polling a child process we cannot be notified by
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
    throw new IllegalStateException("etcd " + m.name + " not healthy within " + START_TIMEOUT
        + ": " + log(m));
  }

  private boolean healthy(Member m) {
    if (tls != null) {
      // /health needs a client certificate under client-cert-auth: a TCP connect says enough,
      // and a cluster of one has no election to wait for.
      try (java.net.Socket s = new java.net.Socket("127.0.0.1", m.clientPort)) {
        return true;
      } catch (IOException e) {
        return false;
      }
    }
    try {
      HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + m.clientPort
          + "/health").toURL().openConnection();
      c.setConnectTimeout(500);
      c.setReadTimeout(2000);
      try {
        return c.getResponseCode() == 200
            && new String(c.getInputStream().readAllBytes()).contains("\"true\"");
      } finally {
        c.disconnect();
      }
    } catch (IOException e) {
      return false;
    }
  }

  /** The member's log so far, for a failure message. */
  public String log(Member m) {
    try {
      String s = Files.readString(root.resolve(m.name + ".log"));
      return s.length() > 4000 ? s.substring(s.length() - 4000) : s;
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  @Override
  public void close() {
    for (Member m : members) {
      stop(m);
    }
    try (Stream<Path> s = Files.walk(root)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // best effort: a temp dir
    }
  }

  private static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
