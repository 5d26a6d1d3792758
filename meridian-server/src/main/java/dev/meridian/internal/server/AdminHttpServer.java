package dev.meridian.internal.server;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import dev.meridian.internal.protocol.LogLine;
import dev.meridian.internal.protocol.NodeMatcher;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.config.ConfigSource;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The HTTP (admin) port, documented in docs/operations.md: the status page {@code /},
 * {@code /status}, {@code /healthz} (live), {@code /readyz} (config loaded and gRPC serving),
 * {@code /version}, {@code /config_dump}, {@code /clients} and {@code /metrics}. Handlers only
 * read immutable config and stream status snapshots.
 */
final class AdminHttpServer implements AutoCloseable {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger("dev.meridian.server");

  private final HttpServer server;
  private final HttpExecutor executor;
  private final AdminAccess access;

  AdminHttpServer(InetSocketAddress address, BooleanSupplier healthy) throws IOException {
    this(address, () -> true, healthy, null, null);
  }

  /**
   * @param store the config store (etcd) whose state {@code /readyz} and {@code /clients} report;
   *     null for a config file
   */
  AdminHttpServer(InetSocketAddress address, BooleanSupplier live, BooleanSupplier ready,
      DiscoveryHub hub, ConfigSource store) throws IOException {
    this(address, live, ready, hub, store, null);
  }

  /** @param logLevels what {@code /logging} changes; null: the endpoint says it cannot */
  AdminHttpServer(InetSocketAddress address, BooleanSupplier live, BooleanSupplier ready,
      DiscoveryHub hub, ConfigSource store, LogLevels logLevels) throws IOException {
    this(address, live, ready, hub, store, logLevels, Bounds.DEFAULT);
  }

  /**
   * @param bounds its threads, queue and request timeout (see {@link HttpExecutor}): a slow or
   *     flooding client cannot keep {@code /readyz} from answering
   */
  AdminHttpServer(InetSocketAddress address, BooleanSupplier live, BooleanSupplier ready,
      DiscoveryHub hub, ConfigSource store, LogLevels logLevels, Bounds bounds)
      throws IOException {
    this(address, live, ready, hub, store, logLevels, bounds, List.of());
  }

  /**
   * @param allowedHosts the host names and addresses it answers to besides loopback and its own
   *     address ({@code --admin-allowed-hosts}, see {@link AdminAccess})
   * @throws IllegalArgumentException for an allowed host that is neither a name nor an address
   */
  AdminHttpServer(InetSocketAddress address, BooleanSupplier live, BooleanSupplier ready,
      DiscoveryHub hub, ConfigSource store, LogLevels logLevels, Bounds bounds,
      java.util.Collection<String> allowedHosts) throws IOException {
    server = HttpServer.create(address, 1024);
    try {
      access = new AdminAccess(server.getAddress(), allowedHosts);
    } catch (IllegalArgumentException e) {
      server.stop(0);
      throw e;
    }
    executor = new HttpExecutor("meridian-http", bounds, hub == null ? null : hub.metrics());
    server.setExecutor(executor);
    Map<String, HttpHandler> routes = routes(live, ready, hub, store);
    HttpHandler page = routes.remove("/");
    // Admin requests have no body: read once the handler runs.
    routes.forEach((path, h) -> context(path, executor.handler(h)));
    context("/logging", executor.handler(logging(logLevels)));
    // "/" matches every path no other context does: exactly "/" is the status page, the rest 404.
    context("/", executor.handler(ex -> {
      if (page != null && ex.getRequestURI().getPath().equals("/")) {
        page.handle(ex);
      } else {
        send(ex, 404, "not found: " + ex.getRequestURI().getPath() + "\n");
      }
    }));
    server.start();
    if (!server.getAddress().getAddress().isLoopbackAddress()) {
      LOG.warn(LogLine.of("admin_exposed").kv("bind", address.getHostString())
          .kv("port", server.getAddress().getPort())
          .kv("risk", "anyone who reaches the port reads /config_dump (every served resource, "
              + "Secrets redacted), /clients (every node), /metrics and /status, and sets log "
              + "levels (POST /logging); there is no authentication")
          .kv("fix", "--admin-bind 127.0.0.1, or restrict who reaches the port (a firewall, a "
              + "NetworkPolicy) (docs/security.md)").toString());
    }
  }

  /** Every request, whatever its path, passes the Host and Origin checks first. */
  private void context(String path, HttpHandler handler) {
    server.createContext(path, handler).getFilters().add(access);
  }

  /**
   * The admin endpoints by path: {@code /healthz}, {@code /readyz}, {@code /version} (build
   * version and commit), and with a hub {@code /config_dump}, {@code /clients}, {@code /metrics},
   * {@code /status}, the status page {@code /} and its script {@code /status.js}.
   */
  static Map<String, HttpHandler> routes(BooleanSupplier live, BooleanSupplier ready,
      DiscoveryHub hub, ConfigSource store) {
    Map<String, HttpHandler> routes = new java.util.LinkedHashMap<>();
    routes.put("/healthz", get(ex -> {
      if (live.getAsBoolean()) {
        send(ex, 200, "ok\n");
      } else {
        send(ex, 503, "shutting down\n");
      }
    }));
    routes.put("/readyz", get(ex -> {
      if (ready.getAsBoolean()) {
        send(ex, 200, "ok\n" + (store == null ? "" : storeLine(store) + "\n"));
      } else if (store != null && !store.status().loaded()) {
        send(ex, 503, "not ready: waiting for the first config from " + store.describe()
            + (store.status().detail() == null ? "" : ": " + store.status().detail()) + "\n");
      } else {
        send(ex, 503, "not ready: config not loaded, gRPC not serving, or shutting down\n");
      }
    }));
    routes.put("/version", get(ex -> sendBody(ex, 200, "application/json",
        BuildInfo.current().json() + "\n")));
    if (hub != null) {
      routes.put("/config_dump", get(ex -> configDump(ex, hub)));
      routes.put("/clients", get(ex -> clients(ex, hub, store)));
      // OpenMetrics when the scraper's Accept header asks for it, else the Prometheus text format
      routes.put("/metrics", get(ex -> {
        Metrics.Exposition e = hub.metrics().expose(ex.getRequestHeaders().getFirst("Accept"));
        sendBytes(ex, 200, e.contentType(), e.body());
      }));
      routes.put("/status", get(ex -> json(ex, AdminJson.status(hub.controlPlaneId(),
          ready.getAsBoolean(), hub.current(), hub.reloads(), hub.publishes().last(), store))));
      // The status page (issue 24): static HTML and JS from the jar, reading /status and /clients.
      routes.put("/", get(ex -> page(ex, "text/html; charset=utf-8", StatusPage.HTML)));
      routes.put("/status.js", get(ex -> page(ex, "text/javascript; charset=utf-8",
          StatusPage.JS)));
    }
    return routes;
  }

  /**
   * {@code GET /logging} lists the levels set; {@code POST /logging?level=L[&logger=NAME]} sets
   * one at runtime (default logger {@code dev.meridian}, every Meridian logger). NAME is one of
   * {@link LogLevels#LOGGERS}.
   */
  static HttpHandler logging(LogLevels levels) {
    return ex -> {
      try {
        String method = ex.getRequestMethod();
        if (!method.equals("GET") && !method.equals("HEAD") && !method.equals("POST")) {
          send(ex, 405, "method not allowed: GET lists the levels, POST ?level=L[&logger=NAME] "
              + "sets one\n");
          return;
        }
        if (levels == null) {
          send(ex, 501, "log levels are set by the embedding application's logging backend\n");
          return;
        }
        if (method.equals("POST")) {
          Map<String, String> q = query(ex);
          String level = q.get("level");
          if (level == null || level.isEmpty()) {
            send(ex, 400, "POST /logging?level=debug|info|warn|error[&logger=NAME]\n");
            return;
          }
          String logger = q.getOrDefault("logger", "dev.meridian");
          if (!LogLevels.LOGGERS.contains(logger)) {
            // Refused before the backend sees the name: each name set would be a logger kept
            // for the life of the process.
            send(ex, 400, "unknown logger '" + logger + "': use one of "
                + String.join(", ", LogLevels.LOGGERS) + "\n");
            return;
          }
          try {
            levels.set(logger, level);
          } catch (IllegalArgumentException e) {
            send(ex, 400, e.getMessage() + "\n");
            return;
          }
        }
        StringBuilder body = new StringBuilder();
        new java.util.TreeMap<>(levels.levels()).forEach((logger, level) ->
            body.append(logger.isEmpty() ? "(root)" : logger).append(' ').append(level)
                .append('\n'));
        send(ex, 200, body.toString());
      } catch (RuntimeException e) {
        send(ex, 500, "internal error: " + e + "\n");
      }
    };
  }

  /**
   * One handler serving {@code routes} below whatever context it is mounted at in someone else's
   * HTTP server: mounted at {@code /meridian}, {@code /meridian/clients} is {@code /clients}.
   */
  static HttpHandler mounted(Map<String, HttpHandler> routes) {
    return ex -> {
      String base = ex.getHttpContext().getPath();
      String path = ex.getRequestURI().getPath();
      String rest = path.startsWith(base) ? path.substring(base.length()) : path;
      if (rest.isEmpty() && !path.endsWith("/")) {
        // The page at /meridian: its relative links need /meridian/ to resolve below the mount.
        String query = ex.getRequestURI().getRawQuery();
        ex.getResponseHeaders().set("Location",
            ex.getRequestURI().getRawPath() + "/" + (query == null ? "" : "?" + query));
        send(ex, 301, "moved to " + path + "/\n");
        return;
      }
      if (!rest.startsWith("/")) {
        rest = "/" + rest;
      }
      HttpHandler h = routes.get(rest.length() > 1 && rest.endsWith("/")
          ? rest.substring(0, rest.length() - 1) : rest);
      if (h == null) {
        send(ex, 404, "not found: " + path + "\n");
      } else {
        h.handle(ex);
      }
    };
  }

  /** The body of {@code /clients} (without a filter). */
  static String clientsJson(DiscoveryHub hub, ConfigSource store) throws Exception {
    return pretty(clientsBody(hub, store, null));
  }

  /** What {@code /clients} shows: every stream the filter (null: none) selects, and the store. */
  private static com.google.gson.JsonObject clientsBody(DiscoveryHub hub, ConfigSource store,
      NodeMatcher filter) throws Exception {
    List<ClientStatus> statuses = hub.registry().statuses()
        .get(StreamRegistry.STATUS_TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
    com.google.gson.JsonObject body = AdminJson.clients(statuses, hub.current(), filter,
        hub.controlPlaneId());
    if (store != null) {
      body.add("config_source", AdminJson.store(store));
    }
    return body;
  }


  /** The body of {@code /config_dump} (every group, every type). */
  static String configDumpJson(DiscoveryHub hub) {
    return pretty(AdminJson.configDump(hub.current(), null, null));
  }

  private static String pretty(JsonElement body) {
    return new GsonBuilder().setPrettyPrinting().serializeNulls().disableHtmlEscaping().create()
        .toJson(body) + "\n";
  }

  /** Adds a handler for a path prefix (REST-JSON discovery, ...). */
  void handle(String pathPrefix, com.sun.net.httpserver.HttpHandler handler) {
    context(pathPrefix, handler);
  }

  int port() {
    return server.getAddress().getPort();
  }

  InetSocketAddress address() {
    return server.getAddress();
  }

  private static HttpHandler get(HttpHandler h) {
    return ex -> {
      try {
        if (!ex.getRequestMethod().equals("GET") && !ex.getRequestMethod().equals("HEAD")) {
          send(ex, 405, "method not allowed\n");
        } else {
          h.handle(ex);
        }
      } catch (RuntimeException e) {
        send(ex, 500, "internal error: " + e + "\n");
      }
    };
  }

  private static void configDump(HttpExchange ex, DiscoveryHub hub) throws IOException {
    Map<String, String> q = query(ex);
    ServedConfig config = hub.current();
    String group = q.get("group");
    ResourceType type = null;
    if (q.containsKey("type")) {
      type = ResourceType.parse(q.get("type")).orElse(null);
      if (type == null) {
        send(ex, 400, "unknown type '" + q.get("type") + "': use a type URL, a name like clusters "
            + "or an abbreviation like CDS\n");
        return;
      }
    }
    if (group != null && !contains(config.groupNames(), group)) {
      send(ex, 404, "no group '" + group + "'\n");
      return;
    }
    json(ex, AdminJson.configDump(config, group, type));
  }

  private static boolean contains(Iterable<String> names, String name) {
    for (String n : names) {
      if (n.equals(name)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The store's state in one line: what {@code /readyz} adds while ready. Still ready while the
   * store is unreachable: the last config keeps being served to connected and new clients.
   */
  static String storeLine(ConfigSource store) {
    ConfigSource.Status s = store.status();
    return "config: " + store.describe() + " revision " + s.revision()
        + (s.connected() ? "" : "; store unreachable since " + s.since()
            + ", serving the last config")
        + (s.detail() == null ? "" : "; " + s.detail());
  }

  private static void clients(HttpExchange ex, DiscoveryHub hub, ConfigSource store)
      throws IOException {
    Map<String, String> q = query(ex);
    NodeMatcher filter = q.containsKey("node_id") || q.containsKey("node_cluster")
        ? new NodeMatcher(q.get("node_id"), q.get("node_cluster")) : null;
    com.google.gson.JsonObject body;
    try {
      body = clientsBody(hub, store, filter);
    } catch (Exception e) {
      send(ex, 503, "stream status unavailable: " + e + "\n");
      return;
    }
    json(ex, body);
  }

  static Map<String, String> query(HttpExchange ex) {
    Map<String, String> q = new HashMap<>();
    String raw = ex.getRequestURI().getRawQuery();
    if (raw == null || raw.isEmpty()) {
      return q;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      String k = eq < 0 ? pair : pair.substring(0, eq);
      String v = eq < 0 ? "" : pair.substring(eq + 1);
      q.put(URLDecoder.decode(k, StandardCharsets.UTF_8), URLDecoder.decode(v, StandardCharsets.UTF_8));
    }
    return q;
  }

  /**
   * A status page resource: never cached (a new version of the server serves a new page), with a
   * Content-Security-Policy that allows only this origin's script and the page's own style.
   */
  private static void page(HttpExchange ex, String contentType, String body) throws IOException {
    ex.getResponseHeaders().set("Cache-Control", "no-store");
    ex.getResponseHeaders().set("Content-Security-Policy", StatusPage.CSP);
    ex.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
    ex.getResponseHeaders().set("Referrer-Policy", "no-referrer");
    sendBody(ex, 200, contentType, body);
  }

  private static void json(HttpExchange ex, JsonElement body) throws IOException {
    sendBody(ex, 200, "application/json; charset=utf-8", pretty(body));
  }

  static void send(HttpExchange ex, int status, String body) throws IOException {
    sendBody(ex, status, "text/plain; charset=utf-8", body);
  }

  static void sendBody(HttpExchange ex, int status, String contentType, String body)
      throws IOException {
    sendBytes(ex, status, contentType, body.getBytes(StandardCharsets.UTF_8));
  }

  static void sendBytes(HttpExchange ex, int status, String contentType, byte[] bytes)
      throws IOException {
    ex.getResponseHeaders().set("Content-Type", contentType);
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
    executor.close();
  }
}
