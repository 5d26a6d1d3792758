package dev.meridian.internal.server;

import static dev.meridian.internal.server.OpsFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.testing.TestCerts;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A TLS handshake that fails on the xDS port is logged by the server, saying why from its side,
 * once a minute per peer address, and counted every time. Each client connects from a loopback
 * address of its own (127.0.0.N), so each is a peer of its own.
 */
class TlsHandshakeFailuresTest {
  @TempDir Path dir;
  TestCerts.Ca ca;
  TestCerts.Ca stranger;
  MeridianServer server;
  final List<String> lines = new ArrayList<>();
  /** Held: java.util.logging keeps loggers only weakly, and with them their handlers. */
  final Logger logger = Logger.getLogger("dev.meridian.server");
  final Handler handler = new Handler() {
    @Override public void publish(LogRecord r) {
      synchronized (lines) {
        lines.add(r.getLevel() + " " + r.getMessage());
      }
    }

    @Override public void flush() {}

    @Override public void close() {}
  };

  @BeforeEach
  void start() throws Exception {
    logger.addHandler(handler);
    ca = TestCerts.ca("meridian-test-ca");
    stranger = TestCerts.ca("some-other-ca");
    Path caFile = ca.writeCert(dir.resolve("ca.crt"));
    TestCerts.Written serverFiles = ca.leaf("meridian").loopback().issue().write(dir, "server");
    Path config = dir.resolve("config.yaml");
    Files.writeString(config, OpsFixture.config("5s"));
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 100)
        .withTls(new MeridianServer.Options.Tls(serverFiles.cert(), serverFiles.key(), caFile)))
        .start();
  }

  @AfterEach
  void stop() {
    server.close();
    logger.removeHandler(handler);
  }

  @Test
  void aClientCertificateOfAnotherCaIsLoggedOncePerPeerAndCountedEveryTime() throws Exception {
    SSLContext foreign = client(stranger.leaf("intruder").uri("spiffe://x/y").issue(), ca);
    for (int i = 0; i < 3; i++) {
      handshake("127.0.0.2", foreign);
    }
    await("three failures counted", () -> failures() == 3);
    assertThat(failedLines("127.0.0.2")).singleElement().asString()
        .contains(" reason=\"the client's certificate is not issued by a CA of --tls-client-ca\"")
        .contains(" detail=");
  }

  @Test
  void aClientWithoutACertificateUnderMtlsIsToldApart() throws Exception {
    handshake("127.0.0.3", client(null, ca));
    await("the failure logged", () -> !failedLines("127.0.0.3").isEmpty());
    assertThat(failedLines("127.0.0.3")).singleElement().asString().contains(
        " reason=\"the client sent no certificate; this server requires one (--tls-client-ca)\"");
  }

  @Test
  void aClientThatDoesNotTrustTheServersCertificateIsToldApart() throws Exception {
    handshake("127.0.0.4", client(ca.leaf("envoy").uri("spiffe://x/envoy").issue(), stranger));
    await("the failure logged", () -> !failedLines("127.0.0.4").isEmpty());
    assertThat(failedLines("127.0.0.4")).singleElement().asString().contains(
        " reason=\"the client refused this server's certificate (--tls-cert): it does not trust"
            + " its issuer, or the name it connected to is not in it\"");
  }

  @Test
  void plaintextOnTheTlsPortIsSaidSo() throws Exception {
    try (Socket s = from("127.0.0.5")) {
      OutputStream out = s.getOutputStream();
      out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      s.getInputStream().read(); // until the server closes
    } catch (IOException e) {
      // closed by the server
    }
    await("the failure logged", () -> !failedLines("127.0.0.5").isEmpty());
    assertThat(failedLines("127.0.0.5")).singleElement().asString()
        .contains(" reason=\"not TLS: the client spoke plaintext to this TLS port");
  }

  /** A TCP health check connects and closes: no handshake failed, nothing to say. */
  @Test
  void aConnectionClosedBeforeAnyTlsIsNeitherLoggedNorCounted() throws Exception {
    from("127.0.0.6").close();
    try (SSLSocket ok = (SSLSocket) client(ca.leaf("envoy").uri("spiffe://x/envoy").issue(), ca)
        .getSocketFactory().createSocket(from("127.0.0.7"), "127.0.0.1", server.xdsPort(), true)) {
      ok.startHandshake();
    }
    // A failure after both, from a third peer: once it is counted, the two are long handled.
    handshake("127.0.0.8", client(null, ca));
    await("the third peer's failure logged", () -> !failedLines("127.0.0.8").isEmpty());
    assertThat(failures()).isEqualTo(1);
    assertThat(failedLines("127.0.0.6")).isEmpty();
    assertThat(failedLines("127.0.0.7")).isEmpty();
  }

  List<String> failedLines(String host) {
    synchronized (lines) {
      return lines.stream().filter(l -> l.startsWith("WARNING tls_handshake_failed peer=" + host
          + ":")).toList();
    }
  }

  double failures() {
    for (String line : server.hub().metrics().render().split("\n")) {
      if (line.startsWith("meridian_tls_handshake_failures_total ")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  Socket from(String local) throws IOException {
    Socket s = new Socket();
    s.bind(new InetSocketAddress(local, 0));
    s.connect(new InetSocketAddress("127.0.0.1", server.xdsPort()), 5000);
    s.setSoTimeout(10_000);
    return s;
  }

  /** A TLS handshake from {@code local}; reads until the server answers or closes. */
  void handshake(String local, SSLContext ctx) throws IOException {
    try (Socket plain = from(local);
        SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(plain, "127.0.0.1",
            server.xdsPort(), true)) {
      s.setSoTimeout(10_000);
      s.startHandshake();
      // TLS 1.3: the server judges the client's certificate after the client is done; its
      // verdict (an alert, or HTTP/2 SETTINGS) is the next thing read.
      s.getInputStream().read();
    } catch (IOException e) {
      // the failure under test, seen from the client
    }
  }

  /** A client presenting {@code leaf} (none if null) and trusting {@code trusted}. */
  static SSLContext client(TestCerts.Leaf leaf, TestCerts.Ca trusted) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", trusted.cert());
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(
        TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (leaf != null) {
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(null, null);
      keys.setKeyEntry("client", leaf.key(), new char[0],
          new X509Certificate[] {leaf.cert(), leaf.issuer()});
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, new char[0]);
    }
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return ctx;
  }
}
