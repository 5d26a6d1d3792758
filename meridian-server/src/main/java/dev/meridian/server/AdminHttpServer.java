package dev.meridian.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;

/** The HTTP port: {@code GET /healthz} (200 once the config is loaded and gRPC is serving). */
final class AdminHttpServer implements AutoCloseable {
  private final HttpServer server;
  private final ExecutorService executor;

  AdminHttpServer(InetSocketAddress address, BooleanSupplier healthy) throws IOException {
    server = HttpServer.create(address, 64);
    executor = Executors.newFixedThreadPool(2, r -> {
      Thread t = new Thread(r, "meridian-http");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(executor);
    server.createContext("/healthz", ex -> {
      if (!ex.getRequestMethod().equals("GET") && !ex.getRequestMethod().equals("HEAD")) {
        send(ex, 405, "method not allowed\n");
      } else if (healthy.getAsBoolean()) {
        send(ex, 200, "ok\n");
      } else {
        send(ex, 503, "not ready: config not loaded or gRPC not serving\n");
      }
    });
    server.createContext("/", ex -> send(ex, 404, "not found: " + ex.getRequestURI().getPath() + "\n"));
    server.start();
  }

  /** Adds a handler for a path prefix (REST-JSON discovery, ...). */
  void handle(String pathPrefix, com.sun.net.httpserver.HttpHandler handler) {
    server.createContext(pathPrefix, handler);
  }

  int port() {
    return server.getAddress().getPort();
  }

  static void send(HttpExchange ex, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    boolean head = ex.getRequestMethod().equals("HEAD");
    ex.sendResponseHeaders(status, head ? -1 : bytes.length);
    if (!head) {
      try (OutputStream os = ex.getResponseBody()) {
        os.write(bytes);
      }
    }
    ex.close();
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
