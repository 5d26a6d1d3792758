package dev.meridian.internal.server;

import com.google.protobuf.InvalidProtocolBufferException;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.internal.protocol.HeartbeatPolicy;
import dev.meridian.internal.protocol.ClientText;
import dev.meridian.internal.protocol.LogLine;
import dev.meridian.internal.protocol.Outcome;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.SotwStream;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * REST-JSON polling (spec "REST-JSON polling subscriptions"): {@code POST /v3/discovery:<type>}
 * with a proto3-JSON DiscoveryRequest. Each request is a one-shot SotW stream on the shared core,
 * so selection, versions, wildcard, TTL wrapping and groups are exactly those of gRPC: a request at
 * the current version is a reconnect that needs nothing, answered 304 at once, or held (no thread)
 * until a change or the {@code Prefer: wait=N} deadline.
 */
final class RestDiscovery implements HttpHandler {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.server.xds");
  static final String PREFIX = "/v3/discovery:";
  private static final Map<String, ResourceType> PATHS = Map.of(
      "listeners", ResourceType.LISTENER,
      "routes", ResourceType.ROUTE,
      "scoped-routes", ResourceType.SCOPED_ROUTE,
      "clusters", ResourceType.CLUSTER,
      "endpoints", ResourceType.ENDPOINT,
      "secrets", ResourceType.SECRET,
      "runtime", ResourceType.RUNTIME,
      "extension_configs", ResourceType.EXTENSION_CONFIG);
  private static final Pattern WAIT = Pattern.compile("(?:^|[,;\\s])wait\\s*=\\s*\"?(\\d+)\"?");

  private final DiscoveryHub hub;
  private final Clock clock;
  private final HeartbeatPolicy heartbeats;
  private final Executor pool;
  private final ScheduledExecutorService timers;
  private final Duration maxWait;
  /** Whether a poll without a verified identity gets Secrets (issue 20). */
  private final boolean plaintextSecrets;
  private final HttpExecutor http;
  /** The largest request body ({@code --max-request-bytes}). */
  private final int maxBody;
  /** Polls held at most at once ({@code --max-rest-long-polls}), and held now. */
  private final int maxHeld;
  /** Resource names one poll may carry ({@code --max-resource-names}). */
  private final int maxNames;
  private final java.util.concurrent.atomic.AtomicInteger held =
      new java.util.concurrent.atomic.AtomicInteger();
  /** Refused certificates are logged as on gRPC; each poll is a new stream, so withheld Secrets
   * are logged once a minute per identity and name, not on every poll. */
  private final PeerAddress peers;
  private final LogGate withheldLog;
  /** The requests the server holds at once ({@code --max-request-memory}), shared with gRPC. */
  private final RequestMemory memory;

  /** @param http the executor of the port it serves on, told when a request's body is read */
  RestDiscovery(DiscoveryHub hub, Clock clock, HeartbeatPolicy heartbeats, Executor pool,
      ScheduledExecutorService timers, Duration maxWait, boolean plaintextSecrets,
      Bounds bounds, HttpExecutor http, RequestMemory memory) {
    this.http = http;
    this.memory = memory;
    this.maxBody = bounds.maxRequestBytes();
    this.maxHeld = bounds.maxRestLongPolls();
    this.maxNames = bounds.maxResourceNames();
    this.plaintextSecrets = plaintextSecrets;
    this.hub = hub;
    this.clock = clock;
    this.heartbeats = heartbeats;
    this.pool = pool;
    this.timers = timers;
    this.maxWait = maxWait;
    this.peers = new PeerAddress(clock);
    this.withheldLog = new LogGate(clock, Duration.ofMinutes(1));
  }

  @Override
  public void handle(HttpExchange ex) throws IOException {
    String path = ex.getRequestURI().getPath();
    ResourceType type = path.startsWith(PREFIX) ? PATHS.get(path.substring(PREFIX.length())) : null;
    if (type == null) {
      text(ex, 404, "not found: " + path + " (REST-JSON serves POST " + PREFIX + "{"
          + String.join("|", new java.util.TreeSet<>(PATHS.keySet())) + "}; there is no ADS or"
          + " Delta over REST)\n");
      return;
    }
    Identities.Proof proof = ex instanceof com.sun.net.httpserver.HttpsExchange https
        ? Identities.of(https.getSSLSession()) : Identities.Proof.NONE;
    if (proof.refusal() != null) {
      peers.refused(proof.refusal(), PeerAddress.host(ex.getRemoteAddress()),
          PeerAddress.format(ex.getRemoteAddress()), path);
      text(ex, 401, proof.refusal() + ": this server will not choose among them\n");
      return;
    }
    if (!hub.isLoaded()) {
      // A config store (etcd) has not delivered its first config: an empty answer would tell
      // the client every resource is gone.
      ex.getResponseHeaders().set("Retry-After", "1");
      text(ex, 503, "no config loaded yet; retry, or use another replica\n");
      return;
    }
    if (!ex.getRequestMethod().equals("POST")) {
      ex.getResponseHeaders().set("Allow", "POST");
      text(ex, 405, "use POST with a JSON DiscoveryRequest\n");
      return;
    }
    long declared = declaredLength(ex);
    if (declared > maxBody) {
      // Refused before a byte is read; the JDK closes the connection rather than drain it.
      text(ex, 413, "request body larger than " + maxBody + " bytes\n");
      ex.getRequestBody().close();
      return;
    }
    // Held from before the body is read until the poll is answered or handed to the hub.
    long reserved = declared >= 0 ? declared : maxBody;
    if (!memory.reserve(reserved)) {
      hub.metrics().boundRefused("max_request_memory");
      ex.getResponseHeaders().set("Retry-After", "1");
      text(ex, 503, memory.refusal(reserved) + "\n");
      ex.getRequestBody().close();
      return;
    }
    try {
      poll(ex, path, type, proof);
    } finally {
      memory.release(reserved);
    }
  }

  private void poll(HttpExchange ex, String path, ResourceType type, Identities.Proof proof)
      throws IOException {
    DiscoveryRequest req;
    try (InputStream in = ex.getRequestBody()) {
      byte[] body = in.readNBytes(maxBody + 1);
      http.requestRead();
      if (body.length > maxBody) {
        text(ex, 413, "request body larger than " + maxBody + " bytes\n");
        return;
      }
      DiscoveryRequest.Builder b = DiscoveryRequest.newBuilder();
      // The full registry on the first REST request, not at start (issue 18): most servers
      // never get one.
      EnvoyTypeRegistry.get().parser().merge(new String(body, StandardCharsets.UTF_8), b);
      req = b.build();
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      text(ex, 400, "invalid DiscoveryRequest JSON: " + e.getMessage() + "\n");
      return;
    }
    if (!req.hasNode()) {
      text(ex, 400, "the DiscoveryRequest must carry a node\n");
      return;
    }
    if (!req.getTypeUrl().isEmpty() && !req.getTypeUrl().equals(type.typeUrl())) {
      text(ex, 400, "type_url '" + req.getTypeUrl() + "' does not match " + path + ", which serves "
          + type.typeUrl() + "\n");
      return;
    }
    // Each poll starts fresh, like a reconnect: its version_info says what the client holds. The
    // nonce is optional in REST and there is no stream for it to be stale on, so it is dropped.
    SotwStream stream = SotwStream.perType(type, clock, hub.sharing());
    stream.withHeartbeats(heartbeats);
    stream.withControlPlane(hub.controlPlane());
    stream.withMaxResourceNames(maxNames);
    // The same trust rules as gRPC: the identity of the verified client certificate (issue 20).
    stream.withIdentity(proof.identity(), plaintextSecrets);
    req = req.toBuilder().clearResponseNonce().build();
    if (answered(ex, stream, stream.onRequest(req, hub.current()))) {
      return;
    }
    Duration wait = requestedWait(ex);
    if (wait.isZero()) {
      empty(ex, 304);
      return;
    }
    if (held.incrementAndGet() > maxHeld) {
      held.decrementAndGet();
      hub.metrics().boundRefused("max_rest_long_polls");
      // Answered now, as a full server: the client polls again after Retry-After, or elsewhere.
      ex.getResponseHeaders().set("Retry-After", "1");
      text(ex, 503, "this server holds its maximum of " + maxHeld + " long polls; retry, or "
          + "use another replica\n");
      return;
    }
    new Held(ex, stream, wait).start();
  }

  /** Long polls held now. */
  int held() {
    return held.get();
  }

  /** The request's Content-Length, or -1 (none, or chunked). */
  private static long declaredLength(HttpExchange ex) {
    String v = ex.getRequestHeaders().getFirst("Content-Length");
    try {
      return v == null ? -1 : Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /**
   * Answers if the outcomes hold a response or a close; false when there is nothing to say.
   * Refusals are logged and counted as on gRPC (issue 20).
   */
  private boolean answered(HttpExchange ex, SotwStream stream, List<Outcome> outcomes)
      throws IOException {
    for (Outcome o : outcomes) {
      if (o instanceof Outcome.Withheld w) {
        hub.metrics().secretWithheld();
        if (withheldLog.open(stream.identity() + " " + w.name())) {
          LOG.warn(LogLine.of("secret_withheld").kv("rest", ex.getRequestURI().getPath())
              .kv("node", stream.node() == null ? null : ClientText.clip(stream.node().getId()))
              .kv("identity", stream.identity() == null ? "none"
                  : ClientText.clip(stream.identity()))
              .kv("peer", PeerAddress.format(ex.getRemoteAddress()))
              .kv("name", ClientText.clip(w.name())).kv("reason", ClientText.clip(w.reason()))
              .toString());
        }
      }
    }
    for (Outcome o : outcomes) {
      if (o instanceof Outcome.Send s) {
        json(ex, EnvoyTypeRegistry.get().printer().print((DiscoveryResponse) s.response()));
        return true;
      } else if (o instanceof Outcome.Close c) {
        boolean denied = c.code() == Outcome.CloseCode.PERMISSION_DENIED;
        if (denied) {
          hub.metrics().streamDenied();
          LOG.warn(LogLine.of("stream_denied")
              .kv("rest", ex.getRequestURI().getPath())
              .kv("node", stream.node() == null ? null : ClientText.clip(stream.node().getId()))
              .kv("identity",
                  stream.identity() == null ? "none" : ClientText.clip(stream.identity()))
              .kv("peer", PeerAddress.format(ex.getRemoteAddress()))
              .kv("reason", ClientText.clip(c.message()))
              .toString());
        }
        boolean tooMany = c.code() == Outcome.CloseCode.RESOURCE_EXHAUSTED;
        if (tooMany) {
          hub.metrics().boundRefused("max_resource_names");
        }
        text(ex, denied ? 403 : tooMany ? 413 : 400, c.message() + "\n");
        return true;
      }
    }
    return false;
  }

  /** RFC 7240 {@code Prefer: wait=N}, capped by the server's limit; zero when absent. */
  private Duration requestedWait(HttpExchange ex) {
    long seconds = 0;
    for (String h : ex.getRequestHeaders().getOrDefault("Prefer", List.of())) {
      Matcher m = WAIT.matcher(h);
      if (m.find()) {
        try {
          seconds = Math.max(seconds, Long.parseLong(m.group(1)));
        } catch (NumberFormatException e) {
          seconds = Long.MAX_VALUE;
        }
      }
    }
    Duration d = Duration.ofSeconds(Math.min(seconds, maxWait.getSeconds()));
    return d.compareTo(maxWait) > 0 ? maxWait : d;
  }

  /** A held long-poll: a hub listener and a timer, no thread. */
  private final class Held implements DiscoveryHub.Listener {
    private final HttpExchange ex;
    private final SotwStream stream;
    private final Duration wait;
    private final SerialExecutor executor = new SerialExecutor(pool);
    private ScheduledFuture<?> timeout;
    private boolean done;
    private final java.util.concurrent.atomic.AtomicBoolean released =
        new java.util.concurrent.atomic.AtomicBoolean();

    Held(HttpExchange ex, SotwStream stream, Duration wait) {
      this.ex = ex;
      this.stream = stream;
      this.wait = wait;
    }

    void start() throws IOException {
      hub.register(this);
      try {
        timeout = timers.schedule(() -> executor.execute(() -> finish(null)), wait.toMillis(),
            TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        // Shutting down: the poll is not held. Its count and listener are given back (else
        // --max-rest-long-polls would count it for ever) and the client told to retry.
        if (release()) {
          ex.getResponseHeaders().set("Retry-After", "1");
          text(ex, 503, "this server is shutting down; retry, or use another replica\n");
        }
      }
    }

    /** Once only, whoever ends the poll: gives back its count and its hub listener. */
    private boolean release() {
      if (!released.compareAndSet(false, true)) {
        return false;
      }
      held.decrementAndGet();
      hub.unregister(this);
      return true;
    }

    @Override
    public void onConfig(ServedConfig config, Map<String, Map<ResourceType, Set<String>>> changes,
        long generation) {
      executor.execute(() -> {
        if (!done) {
          List<Outcome> out = stream.onConfig(config, changes);
          if (out.stream().anyMatch(o -> o instanceof Outcome.Send || o instanceof Outcome.Close)) {
            finish(out); // a change, or a claim the reload left unproven: answered now
          }
        }
      });
    }

    @Override
    public void onTick(ServedConfig config) {
      // A poll is answered by changes only; TTLs are refreshed by the next poll.
    }

    private void finish(List<Outcome> out) {
      if (done) {
        return;
      }
      done = true;
      if (!release()) {
        return; // already answered: scheduling its timeout was refused
      }
      if (timeout != null) {
        timeout.cancel(false);
      }
      try {
        if (out == null || !answered(ex, stream, out)) {
          empty(ex, 304);
        }
      } catch (IOException e) {
        ex.close(); // the client went away
      }
    }
  }

  private static void json(HttpExchange ex, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(200, bytes.length);
    try (OutputStream os = ex.getResponseBody()) {
      os.write(bytes);
    }
    ex.close();
  }

  private static void text(HttpExchange ex, int status, String body) throws IOException {
    AdminHttpServer.send(ex, status, body);
  }

  private static void empty(HttpExchange ex, int status) throws IOException {
    ex.sendResponseHeaders(status, -1);
    ex.close();
  }
}
