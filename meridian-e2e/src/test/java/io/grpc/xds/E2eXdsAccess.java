package io.grpc.xds;

import io.grpc.BindableService;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Test-only bridge into grpc-java 1.85.1's package-private xDS wiring (pinned version; revisit on
 * upgrade). {@link XdsNameResolverProvider#createForTest} gives each client its own bootstrap, but
 * puts its XdsClient in a private pool that {@link CsdsService#newInstance()} cannot see. Here the
 * same public resolver is built over one shared pool (keyed by channel target, as grpc-java's default
 * pool is), and CSDS is served over that pool, so every test client's own view is observable.
 */
public final class E2eXdsAccess {
  private static final SharedXdsClientPoolProvider POOLS = new SharedXdsClientPoolProvider();

  private E2eXdsAccess() {}

  /**
   * Registers channel credentials for bootstraps' {@code channel_creds} (grpc-java's registry of
   * them is package-private in 1.85.1); the highest priority of a name wins.
   */
  public static void registerCredentials(XdsCredentialsProvider provider) {
    XdsCredentialsRegistry.getDefaultRegistry().register(provider);
  }

  public static void deregisterCredentials(XdsCredentialsProvider provider) {
    XdsCredentialsRegistry.getDefaultRegistry().deregister(provider);
  }

  /** An {@code xds} resolver for {@code scheme:///<listener>} targets using {@code bootstrap}. */
  public static NameResolverProvider resolverProvider(String scheme, Map<String, ?> bootstrap) {
    return new NameResolverProvider() {
      @Override
      public NameResolver newNameResolver(URI uri, NameResolver.Args args) {
        if (!scheme.equals(uri.getScheme())) {
          return null;
        }
        return new XdsNameResolver(uri.toString(), uri.getAuthority(), uri.getPath().substring(1),
            args.getOverrideAuthority(), args.getServiceConfigParser(),
            args.getSynchronizationContext(), args.getScheduledExecutorService(), POOLS,
            ThreadSafeRandom.ThreadSafeRandomImpl.instance, FilterRegistry.getDefaultRegistry(),
            bootstrap, args.getMetricRecorder(), args);
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
    };
  }

  /** grpc-java's CSDS service over the test clients' pool. */
  public static BindableService csds() {
    return new CsdsService(POOLS);
  }
}
