package dev.meridian.testing;

import com.google.protobuf.Message;
import com.google.protobuf.TextFormat;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.cluster.v3.ClusterDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.endpoint.v3.EndpointDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.extension.v3.ExtensionConfigDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.listener.v3.ListenerDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.RouteDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.ScopedRoutesDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.VirtualHostDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.runtime.v3.RuntimeDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.secret.v3.SecretDiscoveryServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * A raw xDS stream for tests, scripted step by step as grpc-java's own tests script a peer: the
 * test sends each request, takes each response with a bounded wait, ACKs or NACKs it, checks that
 * nothing more arrives, and observes how the stream ended. {@link Sotw} or {@link Delta}, on ADS
 * or on a type's own v3 service (every one of them, DeltaVirtualHosts included).
 *
 * <p>The node goes on the first request only, the type URL only on ADS (a per-type service knows
 * its type). Responses queue in arrival order. The test owns the channel; {@link #close()}
 * half-closes the stream, as a client that is done does.
 */
public abstract class RawXdsClient<Q extends Message, R extends Message> implements AutoCloseable {
  /** The bound of {@link #take()} and {@link #awaitClose()}. */
  public static final Duration WAIT = Duration.ofSeconds(10);
  /** How long {@link #expectNoResponse()} watches. */
  public static final Duration QUIET = Duration.ofMillis(200);

  private final boolean ads;
  private final Node node;
  private final Inbox<R> inbox = new Inbox<>();
  private final StreamObserver<Q> requests;
  private boolean nodeSent;

  @SuppressWarnings("unchecked")
  private RawXdsClient(Channel channel, ResourceType perType, Node node, String methodPrefix) {
    this.ads = perType == null;
    this.node = node;
    MethodDescriptor<Q, R> method = (MethodDescriptor<Q, R>) method(perType, methodPrefix);
    this.requests = ClientCalls.asyncBidiStreamingCall(
        channel.newCall(method, CallOptions.DEFAULT), inbox);
  }

  /** A SotW stream on ADS (StreamAggregatedResources). */
  public static Sotw sotwAds(Channel channel, Node node) {
    return new Sotw(channel, null, node);
  }

  /** A SotW stream on ADS for a node with only an id. */
  public static Sotw sotwAds(Channel channel, String nodeId) {
    return sotwAds(channel, node(nodeId));
  }

  /** A SotW stream on {@code type}'s own service (StreamClusters, ...); VHDS has none. */
  public static Sotw sotwPerType(Channel channel, ResourceType type, String nodeId) {
    return new Sotw(channel, type, node(nodeId));
  }

  /** A Delta stream on ADS (DeltaAggregatedResources). */
  public static Delta deltaAds(Channel channel, String nodeId) {
    return new Delta(channel, null, node(nodeId));
  }

  /** A Delta stream on ADS for {@code node} (its client features, cluster, ...). */
  public static Delta deltaAds(Channel channel, Node node) {
    return new Delta(channel, null, node);
  }

  /** A Delta stream on {@code type}'s own service (DeltaClusters, ..., DeltaVirtualHosts). */
  public static Delta deltaPerType(Channel channel, ResourceType type, String nodeId) {
    return new Delta(channel, type, node(nodeId));
  }

  private static Node node(String id) {
    return Node.newBuilder().setId(id).build();
  }

  /** Whether this stream is on ADS (its requests carry type URLs). */
  public boolean ads() {
    return ads;
  }

  /** The next response; fails the test if none comes within {@link #WAIT}. */
  public R take() throws InterruptedException {
    R r = inbox.poll(WAIT);
    if (r == null) {
      Status end = inbox.end();
      throw new AssertionError(end == null ? "no response within " + WAIT
          : "the stream ended (" + end + ") with no response left to take");
    }
    return r;
  }

  /** The next response, which must be of {@code type}. */
  public R take(ResourceType type) throws InterruptedException {
    R r = take();
    if (!typeUrl(r).equals(type.typeUrl())) {
      throw new AssertionError("expected a " + type.abbreviation() + " response, got "
          + typeUrl(r));
    }
    return r;
  }

  /**
   * Every response already queued or arriving until none has come for {@code quiet}: what a
   * stream was sent, for tests that count it (none: an empty list).
   */
  public List<R> takeAll(Duration quiet) throws InterruptedException {
    List<R> all = new java.util.ArrayList<>();
    for (R r = inbox.poll(quiet); r != null; r = inbox.poll(quiet)) {
      all.add(r);
    }
    return all;
  }

  /** Fails the test if a response arrives within {@link #QUIET}. */
  public void expectNoResponse() throws InterruptedException {
    expectNoResponse(QUIET);
  }

  /** Fails the test if a response arrives within {@code bound} (or is already queued). */
  public void expectNoResponse(Duration bound) throws InterruptedException {
    R r = inbox.poll(bound);
    if (r != null) {
      throw new AssertionError("expected no response within " + bound + ", got "
          + TextFormat.shortDebugString(r));
    }
  }

  /** How the stream ended, once it has: OK for a server's half-close, else the error's status. */
  public CompletableFuture<Status> closed() {
    return inbox.closed;
  }

  /** Waits, within {@link #WAIT}, for the stream to end; returns how it ended. */
  public Status awaitClose() throws InterruptedException {
    try {
      return inbox.closed.get(WAIT.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("the stream is still open after " + WAIT);
    } catch (ExecutionException e) {
      throw new AssertionError(e.getCause());
    }
  }

  /** Half-closes the stream (the client is done); a no-op on a stream already gone. */
  @Override
  public synchronized void close() {
    try {
      requests.onCompleted();
    } catch (RuntimeException e) {
      // already closed
    }
  }

  /**
   * Sends what {@code build} makes of the node: the node on the stream's first request, null on
   * every later one.
   */
  synchronized void deliver(Function<Node, Q> build) {
    Q request = build.apply(nodeSent ? null : node);
    nodeSent = true;
    requests.onNext(request);
  }

  abstract String typeUrl(R response);

  /** The bidi method of ADS or of {@code perType}'s service whose name starts with the prefix. */
  private static MethodDescriptor<?, ?> method(ResourceType perType, String prefix) {
    ServiceDescriptor service = perType == null
        ? AggregatedDiscoveryServiceGrpc.getServiceDescriptor()
        : switch (perType) {
          case LISTENER -> ListenerDiscoveryServiceGrpc.getServiceDescriptor();
          case ROUTE -> RouteDiscoveryServiceGrpc.getServiceDescriptor();
          case SCOPED_ROUTE -> ScopedRoutesDiscoveryServiceGrpc.getServiceDescriptor();
          case VIRTUAL_HOST -> VirtualHostDiscoveryServiceGrpc.getServiceDescriptor();
          case CLUSTER -> ClusterDiscoveryServiceGrpc.getServiceDescriptor();
          case ENDPOINT -> EndpointDiscoveryServiceGrpc.getServiceDescriptor();
          case SECRET -> SecretDiscoveryServiceGrpc.getServiceDescriptor();
          case RUNTIME -> RuntimeDiscoveryServiceGrpc.getServiceDescriptor();
          case EXTENSION_CONFIG -> ExtensionConfigDiscoveryServiceGrpc.getServiceDescriptor();
          case LB_ENDPOINT -> io.envoyproxy.envoy.service.endpoint.v3
              .LocalityEndpointDiscoveryServiceGrpc.getServiceDescriptor();
          default -> throw new IllegalArgumentException("no discovery service known for " + perType);
        };
    for (MethodDescriptor<?, ?> m : service.getMethods()) {
      if (m.getType() == MethodDescriptor.MethodType.BIDI_STREAMING
          && m.getBareMethodName().startsWith(prefix)) {
        return m;
      }
    }
    throw new IllegalArgumentException(service.getName() + " has no " + prefix + " method");
  }

  /** State of the world: every request names the resources it wants and ACKs by version. */
  public static final class Sotw extends RawXdsClient<DiscoveryRequest, DiscoveryResponse> {
    Sotw(Channel channel, ResourceType perType, Node node) {
      super(channel, perType, node, "Stream");
    }

    /** Requests {@code names} of {@code type} (none: wildcard) at {@code version} and {@code nonce}. */
    public void send(ResourceType type, String version, String nonce, String... names) {
      send(request(type.typeUrl(), version, nonce, names));
    }

    /** Sends {@code request} as built; only the node is added, to the first one without it. */
    public void send(DiscoveryRequest.Builder request) {
      deliver(n -> (n == null || request.hasNode() ? request : request.setNode(n)).build());
    }

    /** Requests {@code names} of {@code type} (none: wildcard) and takes the response. */
    public DiscoveryResponse subscribe(ResourceType type, String... names)
        throws InterruptedException {
      send(type, "", "", names);
      return take(type);
    }

    /** ACKs {@code r}: its version and nonce, with the names now wanted. */
    public void ack(DiscoveryResponse r, String... names) {
      send(request(r.getTypeUrl(), r.getVersionInfo(), r.getNonce(), names));
    }

    /** NACKs {@code r}: the version kept, its nonce, and error_detail INVALID_ARGUMENT message. */
    public void nack(DiscoveryResponse r, String keptVersion, String message, String... names) {
      send(request(r.getTypeUrl(), keptVersion, r.getNonce(), names)
          .setErrorDetail(errorDetail(message)));
    }

    private DiscoveryRequest.Builder request(String typeUrl, String version, String nonce,
        String... names) {
      DiscoveryRequest.Builder b = DiscoveryRequest.newBuilder().setVersionInfo(version)
          .setResponseNonce(nonce).addAllResourceNames(List.of(names));
      return ads() ? b.setTypeUrl(typeUrl) : b;
    }

    @Override
    String typeUrl(DiscoveryResponse response) {
      return response.getTypeUrl();
    }
  }

  /** Incremental: requests subscribe and unsubscribe names, and ACK by nonce. */
  public static final class Delta extends RawXdsClient<DeltaDiscoveryRequest, DeltaDiscoveryResponse> {
    Delta(Channel channel, ResourceType perType, Node node) {
      super(channel, perType, node, "Delta");
    }

    /** Sends {@code request} for {@code type}: the type URL is added on ADS. */
    public void send(ResourceType type, DeltaDiscoveryRequest.Builder request) {
      send(ads() ? request.setTypeUrl(type.typeUrl()) : request);
    }

    /** Sends {@code request} as built; only the node is added, to the first one without it. */
    public void send(DeltaDiscoveryRequest.Builder request) {
      deliver(n -> (n == null || request.hasNode() ? request : request.setNode(n)).build());
    }

    /** Subscribes to {@code names} of {@code type} and takes the response. */
    public DeltaDiscoveryResponse subscribe(ResourceType type, String... names)
        throws InterruptedException {
      send(type, DeltaDiscoveryRequest.newBuilder().addAllResourceNamesSubscribe(List.of(names)));
      return take(type);
    }

    /** ACKs {@code r} by its nonce. */
    public void ack(DeltaDiscoveryResponse r) {
      send(reply(r));
    }

    /** NACKs {@code r}: its nonce, and error_detail INVALID_ARGUMENT message. */
    public void nack(DeltaDiscoveryResponse r, String message) {
      send(reply(r).setErrorDetail(errorDetail(message)));
    }

    private DeltaDiscoveryRequest.Builder reply(DeltaDiscoveryResponse r) {
      DeltaDiscoveryRequest.Builder b = DeltaDiscoveryRequest.newBuilder()
          .setResponseNonce(r.getNonce());
      return ads() ? b.setTypeUrl(r.getTypeUrl()) : b;
    }

    @Override
    String typeUrl(DeltaDiscoveryResponse response) {
      return response.getTypeUrl();
    }
  }

  private static com.google.rpc.Status errorDetail(String message) {
    return com.google.rpc.Status.newBuilder().setCode(Status.Code.INVALID_ARGUMENT.value())
        .setMessage(message).build();
  }

  /** The receiving side: responses in arrival order, and how the stream ended. */
  private static final class Inbox<R> implements StreamObserver<R> {
    final CompletableFuture<Status> closed = new CompletableFuture<>();
    private final ArrayDeque<R> responses = new ArrayDeque<>();
    private Status end;

    @Override
    public synchronized void onNext(R r) {
      responses.add(r);
      notifyAll();
    }

    @Override
    public void onError(Throwable t) {
      ended(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
      ended(Status.OK);
    }

    private void ended(Status status) {
      synchronized (this) {
        end = status;
        notifyAll();
      }
      closed.complete(status); // outside the lock: dependents run here
    }

    synchronized Status end() {
      return end;
    }

    /** The next response, or null if none came within {@code bound} or the stream ended first. */
    synchronized R poll(Duration bound) throws InterruptedException {
      long deadline = System.nanoTime() + bound.toNanos();
      while (responses.isEmpty() && end == null) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return null;
        }
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
      return responses.poll();
    }
  }
}
