package dev.meridian.e2e;

import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One name for several Meridian replicas, as DNS with several records (or a Kubernetes headless
 * Service) gives one: a gRPC name resolver, registered in grpc-java's default registry under a
 * unique scheme, that resolves {@code <scheme>:///replicas} to every replica's address. grpc-java's
 * xDS client builds its channel to the xDS server with {@code Grpc.newChannelBuilder(server_uri,
 * creds)} (GrpcXdsTransportFactory, 1.85.1), so a bootstrap {@code server_uri} of {@link #target}
 * goes through this resolver and the channel's pick_first balancer, exactly as a DNS name with
 * several A records would: it connects to the first address that answers and, when that connection
 * is lost, to the next.
 */
final class ReplicaAddresses extends NameResolverProvider implements AutoCloseable {
  private static final AtomicInteger SEQ = new AtomicInteger();

  private final String scheme = "meridian-replicas-" + SEQ.incrementAndGet();
  private final List<EquivalentAddressGroup> addresses;

  ReplicaAddresses(List<Integer> ports) {
    this.addresses = ports.stream()
        .map(p -> new EquivalentAddressGroup(new InetSocketAddress("127.0.0.1", p))).toList();
    NameResolverRegistry.getDefaultRegistry().register(this);
  }

  /** The bootstrap's {@code server_uri}. */
  String target() {
    return scheme + ":///replicas";
  }

  @Override
  public NameResolver newNameResolver(URI uri, NameResolver.Args args) {
    if (!scheme.equals(uri.getScheme())) {
      return null;
    }
    return new NameResolver() {
      private Listener2 listener;

      @Override
      public String getServiceAuthority() {
        return "meridian-replicas";
      }

      @Override
      public void start(Listener2 listener) {
        this.listener = listener;
        resolve();
      }

      @Override
      public void refresh() {
        resolve();
      }

      private void resolve() {
        listener.onResult(ResolutionResult.newBuilder().setAddresses(addresses).build());
      }

      @Override
      public void shutdown() {}
    };
  }

  @Override
  public String getDefaultScheme() {
    return scheme;
  }

  @Override
  protected boolean isAvailable() {
    return true;
  }

  @Override
  protected int priority() {
    return 5;
  }

  @Override
  public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
    return List.of(InetSocketAddress.class);
  }

  @Override
  public void close() {
    NameResolverRegistry.getDefaultRegistry().deregister(this);
  }
}
