package example.registry;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The registry's own HTTP API, how instances come and go:
 * <pre>
 * POST /register?service=greeter&amp;address=127.0.0.1:50051     204 (200 if already registered)
 * POST /deregister?service=greeter&amp;address=127.0.0.1:50051   204 (404 if not registered)
 * GET  /services                                             one line per service
 * </pre>
 */
final class RegistryHttp implements AutoCloseable {
  private final HttpServer server;

  RegistryHttp(ServiceRegistry registry, InetSocketAddress address) throws IOException {
    server = HttpServer.create(address, 0);
    server.createContext("/register", ex -> change(ex, registry, true));
    server.createContext("/deregister", ex -> change(ex, registry, false));
    server.createContext("/services", ex -> {
      if (!ex.getRequestMethod().equals("GET")) {
        reply(ex, 405, "GET only\n");
        return;
      }
      StringBuilder out = new StringBuilder();
      registry.services().forEach((s, instances) -> out.append(s).append(' ')
          .append(instances).append('\n'));
      reply(ex, 200, out.toString());
    });
    server.start();
  }

  InetSocketAddress address() {
    return server.getAddress();
  }

  private static void change(HttpExchange ex, ServiceRegistry registry, boolean register)
      throws IOException {
    if (!ex.getRequestMethod().equals("POST")) {
      reply(ex, 405, "POST only\n");
      return;
    }
    Map<String, String> q = query(ex.getRequestURI().getRawQuery());
    try {
      String service = q.get("service");
      ServiceRegistry.Instance instance = ServiceRegistry.Instance.parse(
          q.getOrDefault("address", ""));
      if (register) {
        reply(ex, registry.register(service, instance) ? 204 : 200, "");
      } else {
        reply(ex, registry.deregister(service, instance) ? 204 : 404, "");
      }
    } catch (IllegalArgumentException e) {
      reply(ex, 400, e.getMessage() + "\n");
    }
  }

  private static Map<String, String> query(String raw) {
    Map<String, String> q = new HashMap<>();
    if (raw != null) {
      for (String kv : raw.split("&")) {
        int eq = kv.indexOf('=');
        if (eq > 0) {
          q.put(URLDecoder.decode(kv.substring(0, eq), StandardCharsets.UTF_8),
              URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
        }
      }
    }
    return q;
  }

  private static void reply(HttpExchange ex, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    ex.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
