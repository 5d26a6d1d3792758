package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.meridian.testing.RawHttp;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who the admin port answers (docs/security.md, "The admin port and web pages"): raw HTTP
 * requests with the Host, Origin and Sec-Fetch-Site headers a browser would send, on loopback.
 */
class AdminPortAccessTest {
  private static final List<String> ADMIN_PATHS =
      List.of("/", "/status", "/clients", "/config_dump", "/metrics", "/healthz", "/logging");

  @TempDir Path dir;

  @Test
  void aPageThatRebindsItsOwnNameToTheLoopbackPortIsRefusedMisdirected() throws Exception {
    try (OpsFixture f = new OpsFixture(dir)) {
      int port = f.server.httpPort();
      for (String path : ADMIN_PATHS) {
        RawHttp.Answer a = RawHttp.request(port, "GET", path,
            "Host: rebind.attacker.example:" + port);
        assertThat(a.status()).as(path).isEqualTo(421);
        assertThat(a.body()).as(path).contains("rebind.attacker.example")
            .doesNotContain("greeter-v1");
      }
      // An address that is not this machine's, and headers that are no host at all.
      for (String host : List.of("203.0.113.9:" + port, "[2001:db8::1]:" + port,
          "127.0.0.1.attacker.example", "localhost:http", "::1", "")) {
        assertThat(RawHttp.request(port, "GET", "/config_dump", "Host: " + host).status())
            .as(host).isEqualTo(421);
      }
      assertThat(RawHttp.request(port, "GET", "/config_dump", "Host: localhost",
          "Host: attacker.example").status()).isEqualTo(400);
    }
  }

  @Test
  void loopbackNamesAndAddressesAreAnsweredWithAnyPortAndARequestWithoutHostToo()
      throws Exception {
    try (OpsFixture f = new OpsFixture(dir)) {
      int port = f.server.httpPort();
      for (String host : List.of("localhost:" + port, "LocalHost", "localhost.:" + port,
          "127.0.0.1:" + port, "127.0.0.1:9", "127.0.0.2", "[::1]:" + port, "[::1]")) {
        RawHttp.Answer a = RawHttp.request(port, "GET", "/config_dump", "Host: " + host);
        assertThat(a.status()).as(host).isEqualTo(200);
        assertThat(a.body()).as(host).contains("greeter-v1");
      }
      // HTTP/1.0 without Host: no browser sends that.
      RawHttp.Answer a = RawHttp.exchange(port, "GET /healthz HTTP/1.0\r\n\r\n");
      assertThat(a.status()).isEqualTo(200);
    }
  }

  @Test
  void theHostsOfAdminAllowedHostsAreAnsweredAndAStarAnswersAny() throws Exception {
    try (OpsFixture f = new OpsFixture(dir, o -> o.withAdminAllowedHosts(
        List.of("meridian.ops.example", "10.9.8.7", "[2001:db8::7]")))) {
      int port = f.server.httpPort();
      for (String host : List.of("meridian.ops.example:18001", "MERIDIAN.ops.example",
          "10.9.8.7:80", "[2001:db8::7]:" + port)) {
        assertThat(RawHttp.request(port, "GET", "/clients", "Host: " + host).status())
            .as(host).isEqualTo(200);
      }
      assertThat(RawHttp.request(port, "GET", "/clients", "Host: ops.example").status())
          .isEqualTo(421);
    }
    try (OpsFixture f = new OpsFixture(dir, o -> o.withAdminAllowedHosts(List.of("*")))) {
      assertThat(RawHttp.request(f.server.httpPort(), "GET", "/clients",
          "Host: anything.example").status()).isEqualTo(200);
    }
  }

  @Test
  void anAllowedHostThatIsNoHostIsRefusedWithTheReason() {
    for (String bad : List.of("ops.example:18001", "http://ops.example", "a b", "", "[::1")) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> new MeridianServer.Options(
              dir, "127.0.0.1", 0, 0, 50).withAdminAllowedHosts(List.of(bad)))
          .as(bad).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("'" + bad + "'").hasMessageContaining("without a port");
    }
  }

  /**
   * The kubelet's HTTP probes and Prometheus name the pod's IP in Host: on a wildcard bind each
   * address of the machine is answered; on a loopback bind only loopback is.
   */
  @Test
  void onAWildcardBindTheMachinesOwnAddressesAreAnsweredAsAProbeNamesThem() throws Exception {
    InetAddress own = nonLoopbackAddress();
    assumeThat(own).as("a non-loopback interface address on this machine").isNotNull();
    String ownHost = own.getHostAddress();
    try (OpsFixture f = new OpsFixture(dir, o -> o.withAdminBind("0.0.0.0"))) {
      int port = f.server.httpPort();
      assertThat(RawHttp.request(port, "GET", "/readyz", "Host: " + ownHost + ":" + port)
          .status()).isEqualTo(200);
      assertThat(RawHttp.request(port, "GET", "/readyz", "Host: 203.0.113.9:" + port)
          .status()).isEqualTo(421);
      assertThat(RawHttp.request(port, "GET", "/readyz", "Host: attacker.example:" + port)
          .status()).isEqualTo(421);
    }
    try (OpsFixture f = new OpsFixture(dir)) {
      int port = f.server.httpPort();
      assertThat(RawHttp.request(port, "GET", "/readyz", "Host: " + ownHost + ":" + port)
          .status()).isEqualTo(421);
    }
  }

  private static InetAddress nonLoopbackAddress() throws Exception {
    for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      for (InetAddress a : Collections.list(nic.getInetAddresses())) {
        if (a instanceof Inet4Address && !a.isLoopbackAddress()) {
          return a;
        }
      }
    }
    return null;
  }

  /** A form POST from another site's page (CSRF) reaches the loopback port with its Origin. */
  @Test
  void aPostFromAPageOfAnotherOriginIsForbiddenAndOneFromTheStatusPagesOwnOriginPasses()
      throws Exception {
    try (OpsFixture f = new OpsFixture(dir)) {
      int port = f.server.httpPort();
      String host = "Host: 127.0.0.1:" + port;
      for (String[] headers : List.of(
          new String[] {host, "Origin: http://attacker.example"},
          new String[] {host, "Origin: null"},
          new String[] {host, "Origin: http://127.0.0.1:" + (port == 1 ? 2 : port - 1)},
          new String[] {host, "Origin: https://127.0.0.1:" + port},
          new String[] {host, "Sec-Fetch-Site: cross-site"},
          new String[] {host, "Sec-Fetch-Site: same-site"})) {
        RawHttp.Answer a = RawHttp.request(port, "POST", "/logging?level=debug", headers);
        assertThat(a.status()).as(String.join(", ", headers)).isEqualTo(403);
        assertThat(a.body()).startsWith("forbidden: a POST ");
      }
      // This server has no log levels to set (501): the request got past the checks.
      assertThat(RawHttp.request(port, "POST", "/logging?level=debug", host,
          "Origin: http://127.0.0.1:" + port, "Sec-Fetch-Site: same-origin").status())
          .isEqualTo(501);
      assertThat(RawHttp.request(port, "POST", "/logging?level=debug", "Host: localhost:" + port,
          "Origin: http://LOCALHOST:" + port).status()).isEqualTo(501);
      assertThat(RawHttp.request(port, "POST", "/logging?level=debug", host).status())
          .as("curl: neither Origin nor Sec-Fetch-Site").isEqualTo(501);
    }
  }

  /**
   * A page of another origin may make the browser fetch the JSON, but never read it: no response
   * carries a CORS header that would allow it, a preflight included.
   */
  @Test
  void noResponseAllowsAnotherOriginToReadIt() throws Exception {
    try (OpsFixture f = new OpsFixture(dir)) {
      int port = f.server.httpPort();
      String host = "Host: 127.0.0.1:" + port;
      for (String path : ADMIN_PATHS) {
        RawHttp.Answer a = RawHttp.request(port, "GET", path, host,
            "Origin: http://attacker.example", "Sec-Fetch-Site: cross-site");
        // /logging: 501, this server has no log levels to list
        assertThat(a.status()).as(path).isEqualTo(path.equals("/logging") ? 501 : 200);
        assertThat(a.headerNames()).as(path).noneMatch(n -> n.startsWith("access-control-"));
        RawHttp.Answer preflight = RawHttp.request(port, "OPTIONS", path, host,
            "Origin: http://attacker.example", "Access-Control-Request-Method: POST");
        assertThat(preflight.status()).as(path).isEqualTo(405);
        assertThat(preflight.headerNames()).as(path)
            .noneMatch(n -> n.startsWith("access-control-"));
      }
    }
  }

  @Test
  void aNonLoopbackAdminBindIsWarnedAboutOnceAtStartAndALoopbackOneIsNot() throws Exception {
    List<String> lines = Collections.synchronizedList(new ArrayList<>());
    Handler h = new Handler() {
      @Override public void publish(LogRecord r) {
        lines.add(r.getLevel() + " " + new java.util.logging.SimpleFormatter().formatMessage(r));
      }

      @Override public void flush() {}

      @Override public void close() {}
    };
    Logger logger = Logger.getLogger("dev.meridian.server");
    logger.addHandler(h);
    try {
      try (OpsFixture f = new OpsFixture(dir, o -> o.withAdminBind("0.0.0.0"))) {
        List<String> warned = new ArrayList<>(lines).stream()
            .filter(l -> l.contains("admin_exposed")).toList();
        assertThat(warned).hasSize(1);
        assertThat(warned.get(0)).startsWith("WARNING admin_exposed bind=0.0.0.0 port="
            + f.server.httpPort() + " ").contains("/config_dump").contains("/logging");
      }
      lines.clear();
      try (OpsFixture f = new OpsFixture(dir)) {
        assertThat(new ArrayList<>(lines)).noneMatch(l -> l.contains("admin_exposed"));
      }
    } finally {
      logger.removeHandler(h);
    }
  }

  /** A logger Meridian's code logs to that /logging refused would be of no use to an operator. */
  @Test
  void everyLoggerMeridiansCodeLogsToCanBeSetAtRuntime() throws Exception {
    Pattern byName = Pattern.compile("getLogger\\(\"([^\"]+)\"\\)");
    Pattern byClass = Pattern.compile("getLogger\\((\\w+)\\.class");
    Pattern pkg = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    List<String> used = new ArrayList<>();
    Path root = Path.of("").toAbsolutePath().getParent();
    List<Path> sources;
    try (Stream<Path> modules = Files.list(root)) {
      sources = modules.filter(m -> m.getFileName().toString().startsWith("meridian-"))
          .map(m -> m.resolve("src/main/java")).filter(Files::isDirectory).toList();
    }
    assertThat(sources).as("main sources beside " + Path.of("").toAbsolutePath()).hasSizeGreaterThan(3);
    for (Path src : sources) {
      try (Stream<Path> files = Files.walk(src)) {
        for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
          String text = Files.readString(file);
          if (!text.contains("org.slf4j")) {
            continue; // the CLI's own java.util.logging setup, the benchmarks
          }
          Matcher m = byName.matcher(text);
          while (m.find()) {
            used.add(m.group(1));
          }
          Matcher c = byClass.matcher(text);
          Matcher p = pkg.matcher(text);
          while (c.find() && p.find(0)) {
            used.add(p.group(1) + "." + c.group(1));
          }
        }
      }
    }
    assertThat(used).contains("dev.meridian.server.xds", "dev.meridian.client.FileXdsTransport");
    assertThat(LogLevels.LOGGERS).containsAll(used);
  }
}
