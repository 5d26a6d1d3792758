package dev.meridian.e2e;

import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.xds.E2eXdsAccess;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A proxyless grpc-java client with its own bootstrap. grpc-java reads the default bootstrap once per
 * JVM, so each client registers its own xds resolver (grpc-java's XdsNameResolver, see
 * {@link E2eXdsAccess}) under a unique scheme: its target {@code <scheme>:///<listener>} keys its own
 * XdsClient and CSDS client_scope.
 */
final class XdsTestClient implements AutoCloseable {
  private static final AtomicInteger SEQ = new AtomicInteger();

  final String target;
  final ManagedChannel channel;
  private final NameResolverProvider provider;

  XdsTestClient(int xdsPort, String nodeId, String listenerName) {
    this(bootstrap(xdsPort, nodeId), listenerName);
  }

  /** A client with the bootstrap given (e.g. A65 mTLS channel credentials). */
  XdsTestClient(Map<String, ?> bootstrap, String listenerName) {
    this(bootstrap, "", listenerName);
  }

  /**
   * A client of target {@code <scheme>://<authority>/<path>}: with an authority, gRFC A47 names the
   * listener by that authority's template in the bootstrap; {@code path} is as in a URI
   * (percent-encoded).
   */
  XdsTestClient(Map<String, ?> bootstrap, String authority, String path) {
    String scheme = "xds-e2e-" + SEQ.incrementAndGet();
    provider = E2eXdsAccess.resolverProvider(scheme, bootstrap);
    NameResolverRegistry.getDefaultRegistry().register(provider);
    target = scheme + "://" + authority + "/" + path;
    channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
  }

  /** A gRFC A27 bootstrap pointing at Meridian, with a node id (and, for servers, A36's template). */
  static Map<String, Object> bootstrap(int xdsPort, String nodeId) {
    return Map.of(
        "xds_servers", List.of(Map.of(
            "server_uri", "127.0.0.1:" + xdsPort,
            "channel_creds", List.of(Map.of("type", "insecure")),
            "server_features", List.of("xds_v3"))),
        "node", Map.of("id", nodeId, "cluster", "e2e"),
        "server_listener_resource_name_template", "grpc/server?xds.resource.listening_address=%s");
  }

  /** One RPC; returns the name of the backend that served it. */
  String hello() {
    return ClientCalls.blockingUnaryCall(channel, Greeter.HELLO,
        CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), "hi");
  }

  /** One RPC that waits for the channel to become ready (the first RPC of a fresh client). */
  String helloWhenReady() {
    return ClientCalls.blockingUnaryCall(channel, Greeter.HELLO,
        CallOptions.DEFAULT.withWaitForReady().withDeadlineAfter(10, TimeUnit.SECONDS), "hi");
  }

  /** The backend name, or "error:<code>" when the RPC failed. */
  String helloOrError() {
    try {
      return hello();
    } catch (StatusRuntimeException e) {
      return "error:" + e.getStatus().getCode();
    }
  }

  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow();
    channel.awaitTermination(5, TimeUnit.SECONDS);
    NameResolverRegistry.getDefaultRegistry().deregister(provider);
  }
}
