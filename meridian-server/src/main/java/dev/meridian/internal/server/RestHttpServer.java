package dev.meridian.internal.server;

import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import javax.net.ssl.SSLParameters;

/**
 * The REST-JSON discovery port ({@code --rest-port}, issue 20): {@code POST /v3/discovery:<type>}
 * and nothing else, apart from the admin port, with the xDS port's TLS, mTLS and identity rules.
 */
final class RestHttpServer implements AutoCloseable {
  private final HttpServer server;
  private final HttpExecutor executor;

  /**
   * @param executor its threads, queue and request timeout (see {@link HttpExecutor}), the one
   *     {@code discovery} marks its requests read on; closed with this server
   */
  RestHttpServer(InetSocketAddress address, RestDiscovery discovery, ServerTls tls,
      HttpExecutor executor) throws IOException {
    this.executor = executor;
    if (tls == null) {
      server = HttpServer.create(address, 1024);
    } else {
      HttpsServer https = HttpsServer.create(address, 1024);
      try {
        https.setHttpsConfigurator(new HttpsConfigurator(tls.sslContext()) {
          @Override
          public void configure(HttpsParameters params) {
            SSLParameters p = getSSLContext().getDefaultSSLParameters();
            p.setNeedClientAuth(tls.requiresClientCertificates());
            params.setSSLParameters(p);
          }
        });
      } catch (GeneralSecurityException e) {
        https.stop(0); // it is bound already
        throw new IOException("TLS for the REST port: " + e.getMessage(), e);
      }
      server = https;
    }
    server.setExecutor(executor);
    server.createContext(RestDiscovery.PREFIX, discovery); // marks its request read itself
    server.createContext("/", executor.handler(ex -> {
      byte[] body = ("not found: " + ex.getRequestURI().getPath() + " (this port serves POST "
          + RestDiscovery.PREFIX + "<type>)\n").getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
      ex.sendResponseHeaders(404, body.length);
      ex.getResponseBody().write(body);
      ex.close();
    }));
    server.start();
  }

  int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
    executor.close();
  }
}
