package dev.meridian.bench;

import dev.meridian.testing.TestCerts;
import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The mTLS material of a {@code --tls true} run, made at run time in the work directory (PEM,
 * keys PKCS#8, EC P-256: {@link TestCerts}): a CA, the server's certificate (DNS {@code
 * localhost}, IP {@code 127.0.0.1}) and one client certificate with the URI SAN {@link
 * #CLIENT_IDENTITY}, shared by every client: what the run measures is the handshake's cost, not
 * distinct identities. The server gets {@code --tls-cert}, {@code --tls-key} and {@code
 * --tls-client-ca}; every client channel {@link TlsChannelCredentials} with the client's
 * certificate and key and the CA as trust, from which gRPC builds each channel its own TLS context:
 * no client resumes another's session, every connect is a full handshake, as in a fleet's first
 * connect. Keys are EC P-256 (as docs/security.md makes them); RSA keys would cost more per
 * handshake.
 */
final class BenchTls {
  /** The SPIFFE ID every bench client presents. */
  static final String CLIENT_IDENTITY = "spiffe://bench.meridian/ns/fleet/sa/client";
  /** The name the clients verify the server's certificate against (they connect to 127.0.0.1). */
  static final String AUTHORITY = "localhost";

  final Path ca;
  final TestCerts.Written server;
  final TestCerts.Written client;
  /** The clients' credentials, one object for all (the files read once). */
  final ChannelCredentials clientCredentials;

  private BenchTls(Path ca, TestCerts.Written server, TestCerts.Written client) {
    this.ca = ca;
    this.server = server;
    this.client = client;
    try {
      this.clientCredentials = TlsChannelCredentials.newBuilder()
          .keyManager(client.cert().toFile(), client.key().toFile())
          .trustManager(ca.toFile()).build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Makes a new CA, server and client certificate in {@code dir} (replacing earlier ones). */
  static BenchTls create(Path dir) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    TestCerts.Ca ca = TestCerts.ca("meridian-bench CA");
    return new BenchTls(ca.writeCert(dir.resolve("ca.crt")),
        ca.leaf("meridian-bench server").loopback().issue().write(dir, "server"),
        ca.leaf("meridian-bench client").uri(CLIENT_IDENTITY).issue().write(dir, "client"));
  }

  /** The server's flags: mTLS, client certificates required (Meridian's serve, and JcpServer). */
  List<String> serverArgs() {
    return List.of("--tls-cert", server.cert().toString(), "--tls-key", server.key().toString(),
        "--tls-client-ca", ca.toString());
  }
}
