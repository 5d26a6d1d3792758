package dev.meridian.client;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * REST-JSON polling (spec "REST-JSON polling subscriptions") behind the same transport seam as
 * gRPC: each per-type "stream" is a loop of {@code POST /v3/discovery:<type>} carrying the client's
 * latest request (so the client's SotW logic, versions, ACK/NACK and reconnect apply unchanged).
 * Polls ask the server to hold them with {@code Prefer: wait=N}; a 304 means "still current". An
 * HTTP error or unreadable JSON ends the "stream" with a status, and the client's backoff reconnects
 * and resubscribes. There is no ADS and no Delta over REST.
 */
public final class RestXdsTransport implements XdsTransport {
  static final Map<ResourceType, String> PATHS = Map.of(
      ResourceType.LISTENER, "listeners",
      ResourceType.ROUTE, "routes",
      ResourceType.SCOPED_ROUTE, "scoped-routes",
      ResourceType.CLUSTER, "clusters",
      ResourceType.ENDPOINT, "endpoints",
      ResourceType.SECRET, "secrets",
      ResourceType.RUNTIME, "runtime",
      ResourceType.EXTENSION_CONFIG, "extension_configs");

  private final URI base;
  private final Duration wait;
  private final Duration minInterval;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "meridian-rest-poll");
    t.setDaemon(true);
    return t;
  });
  private final JsonFormat.Printer printer = JsonFormat.printer().omittingInsignificantWhitespace();
  private final JsonFormat.Parser parser = EnvoyTypeRegistry.get().parser().ignoringUnknownFields();

  /**
   * @param base the server's HTTP address, e.g. {@code http://127.0.0.1:18001}
   * @param wait how long a poll asks the server to hold it ({@code Prefer: wait})
   * @param minInterval the least time between two polls (a server that ignores {@code Prefer} must
   *     not be polled in a tight loop)
   */
  public RestXdsTransport(URI base, Duration wait, Duration minInterval) {
    this.base = base;
    this.wait = wait;
    this.minInterval = minInterval;
  }

  public RestXdsTransport(URI base) {
    this(base, Duration.ofSeconds(30), Duration.ofSeconds(1));
  }

  @Override
  public Call<DiscoveryRequest> openSotw(StreamScope scope, Listener<DiscoveryResponse> listener) {
    if (!(scope instanceof StreamScope.OneType one)) {
      return XdsTransport.unsupported(timer, listener, "there is no ADS over REST: use per-type mode");
    }
    if (!PATHS.containsKey(one.type())) {
      return XdsTransport.unsupported(timer, listener, one.type().typeUrl() + " has no REST API");
    }
    Poll poll = new Poll(one.type(), listener);
    timer.execute(listener::onReady);
    return poll;
  }

  @Override
  public Call<DeltaDiscoveryRequest> openDelta(StreamScope scope,
      Listener<DeltaDiscoveryResponse> listener) {
    return XdsTransport.unsupported(timer, listener, "there is no Incremental xDS over REST");
  }

  /**
   * One type's poll loop; the latest request is what the next poll carries. A poll asks for one
   * response, so it is made only while the client wants one ({@link #request}): the poll that
   * carries an ACK waits until the client has processed the response it acknowledges.
   */
  private final class Poll implements Call<DiscoveryRequest> {
    private final ResourceType type;
    private final Listener<DiscoveryResponse> listener;
    private DiscoveryRequest latest;
    private long generation;
    private long lastStart;
    /** Responses the client asked for and has not been given yet. */
    private int wanted;
    /** A poll of the current generation is scheduled or in flight. */
    private boolean polling;
    private boolean cancelled;

    Poll(ResourceType type, Listener<DiscoveryResponse> listener) {
      this.type = type;
      this.listener = listener;
    }

    @Override
    public synchronized void send(DiscoveryRequest request) {
      if (cancelled) {
        return;
      }
      latest = request.toBuilder().setTypeUrl(type.typeUrl()).build();
      generation++; // a newer request supersedes a poll in flight
      polling = false;
      pollIfWanted();
    }

    @Override
    public synchronized void request(int count) {
      wanted += count;
      pollIfWanted();
    }

    private synchronized void pollIfWanted() {
      if (cancelled || latest == null || wanted == 0 || polling) {
        return;
      }
      polling = true;
      schedule(generation);
    }

    private synchronized void schedule(long g) {
      long elapsed = System.nanoTime() - lastStart;
      long delay = Math.max(0, minInterval.toNanos() - elapsed);
      timer.schedule(() -> poll(g), delay, TimeUnit.NANOSECONDS);
    }

    private void poll(long g) {
      DiscoveryRequest req;
      synchronized (this) {
        if (cancelled || g != generation) {
          return;
        }
        req = latest;
        lastStart = System.nanoTime();
      }
      String body;
      try {
        body = printer.print(req);
      } catch (InvalidProtocolBufferException e) {
        fail(g, Status.INTERNAL.withDescription("cannot encode the request: " + e.getMessage()));
        return;
      }
      HttpRequest http = HttpRequest.newBuilder(base.resolve("/v3/discovery:" + PATHS.get(type)))
          .header("Content-Type", "application/json")
          .header("Prefer", "wait=" + wait.toSeconds())
          .timeout(wait.plusSeconds(10))
          .POST(HttpRequest.BodyPublishers.ofString(body))
          .build();
      CompletableFuture<HttpResponse<String>> f =
          RestXdsTransport.this.http.sendAsync(http, HttpResponse.BodyHandlers.ofString());
      f.whenComplete((resp, err) -> {
        if (err != null) {
          fail(g, Status.UNAVAILABLE.withDescription("REST poll failed: " + err).withCause(err));
        } else if (resp.statusCode() == 304) {
          synchronized (this) {
            if (!cancelled && g == generation) {
              schedule(g); // still current: ask again
            }
          }
        } else if (resp.statusCode() != 200) {
          fail(g, Status.UNAVAILABLE.withDescription("REST poll answered " + resp.statusCode()
              + ": " + resp.body().strip()));
        } else {
          DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder();
          try {
            parser.merge(resp.body(), b);
          } catch (InvalidProtocolBufferException | RuntimeException e) {
            fail(g, Status.INTERNAL.withDescription("unreadable DiscoveryResponse JSON: "
                + e.getMessage()));
            return;
          }
          synchronized (this) {
            if (cancelled || g != generation) {
              return;
            }
            polling = false;
            wanted--;
          }
          // The client's ACK/NACK (send) is carried by the next poll, once it asks for more.
          listener.onMessage(b.build());
        }
      });
    }

    private void fail(long g, Status status) {
      synchronized (this) {
        if (cancelled || g != generation) {
          return;
        }
        cancelled = true;
      }
      listener.onClosed(status);
    }

    @Override
    public synchronized void cancel(String reason) {
      cancelled = true;
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
