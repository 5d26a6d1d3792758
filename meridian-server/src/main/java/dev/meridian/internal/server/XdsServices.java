package dev.meridian.internal.server;

import dev.meridian.internal.protocol.DeltaStream;
import dev.meridian.internal.protocol.HeartbeatPolicy;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.SotwStream;
import io.envoyproxy.envoy.service.cluster.v3.ClusterDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.endpoint.v3.EndpointDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.endpoint.v3.LocalityEndpointDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.extension.v3.ExtensionConfigDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.listener.v3.ListenerDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.RouteDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.ScopedRoutesDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.route.v3.VirtualHostDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.runtime.v3.RuntimeDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.secret.v3.SecretDiscoveryServiceGrpc;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.stub.ServerCalls;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * The v3 discovery services, bound from the generated service descriptors: every Stream* method to
 * the State-of-the-World core, every Delta* method to the Incremental core; the unary Fetch* methods
 * answer UNIMPLEMENTED.
 */
public final class XdsServices {
  private static final Map<ServiceDescriptor, ResourceType> PER_TYPE = Map.of(
      ListenerDiscoveryServiceGrpc.getServiceDescriptor(), ResourceType.LISTENER,
      RouteDiscoveryServiceGrpc.getServiceDescriptor(), ResourceType.ROUTE,
      ScopedRoutesDiscoveryServiceGrpc.getServiceDescriptor(), ResourceType.SCOPED_ROUTE,
      VirtualHostDiscoveryServiceGrpc.getServiceDescriptor(), ResourceType.VIRTUAL_HOST,
      ClusterDiscoveryServiceGrpc.getServiceDescriptor(), ResourceType.CLUSTER,
      EndpointDiscoveryServiceGrpc.getServiceDescriptor(), ResourceType.ENDPOINT,
      SecretDiscoveryServiceGrpc.getServiceDescriptor(), ResourceType.SECRET,
      RuntimeDiscoveryServiceGrpc.getServiceDescriptor(), ResourceType.RUNTIME,
      ExtensionConfigDiscoveryServiceGrpc.getServiceDescriptor(), ResourceType.EXTENSION_CONFIG,
      // LEDS (issue 26): DeltaLocalityEndpoints only, as leds.proto defines it
      LocalityEndpointDiscoveryServiceGrpc.getServiceDescriptor(), ResourceType.LB_ENDPOINT);

  private XdsServices() {}

  public static List<ServerServiceDefinition> all(DiscoveryHub hub, Clock clock, Executor pool,
      HeartbeatPolicy heartbeats) {
    return all(hub, clock, pool, heartbeats, false);
  }

  /**
   * Every discovery service; each stream takes the identity of its verified client certificate
   * (issue 20), and {@code plaintextSecrets} says whether a stream without one gets Secrets.
   */
  public static List<ServerServiceDefinition> all(DiscoveryHub hub, Clock clock, Executor pool,
      HeartbeatPolicy heartbeats, boolean plaintextSecrets) {
    return all(hub, clock, pool, heartbeats, plaintextSecrets, 0);
  }

  /**
   * As {@link #all(DiscoveryHub, Clock, Executor, HeartbeatPolicy, boolean)}, each stream closed
   * RESOURCE_EXHAUSTED when it sends more than {@code maxRequestRate} requests a second on
   * average (see {@link RequestBudget}); 0: no limit.
   */
  public static List<ServerServiceDefinition> all(DiscoveryHub hub, Clock clock, Executor pool,
      HeartbeatPolicy heartbeats, boolean plaintextSecrets, int maxRequestRate) {
    return all(hub, clock, pool, heartbeats, plaintextSecrets, maxRequestRate,
        Bounds.DEFAULT_MAX_RESOURCE_NAMES, new RequestMemory(Bounds.DEFAULT.requestMemoryLimit()));
  }

  /**
   * As above, each request and stream limited to {@code maxResourceNames} resource names: a
   * larger request is refused before its names are decoded (see {@link SharedNamesMarshaller});
   * and every request counted against {@code memory} from its parse until its stream handled it.
   */
  static List<ServerServiceDefinition> all(DiscoveryHub hub, Clock clock, Executor pool,
      HeartbeatPolicy heartbeats, boolean plaintextSecrets, int maxRequestRate,
      int maxResourceNames, RequestMemory memory) {
    List<ServerServiceDefinition> defs = new ArrayList<>();
    // One cache of request name lists each for the SotW and the Delta methods of this server.
    // And one cache each of whole-type response bodies encoded once (SotW, Delta).
    Marshallers m = new Marshallers(
        SharedNamesMarshaller.sotw(
            AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod().getRequestMarshaller(),
            maxResourceNames, memory),
        SharedNamesMarshaller.delta(
            AggregatedDiscoveryServiceGrpc.getDeltaAggregatedResourcesMethod().getRequestMarshaller(),
            maxResourceNames, memory),
        SharedBodyMarshaller.sotw(
            AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod().getResponseMarshaller()),
        SharedBodyMarshaller.delta(
            AggregatedDiscoveryServiceGrpc.getDeltaAggregatedResourcesMethod().getResponseMarshaller()));
    defs.add(bind(AggregatedDiscoveryServiceGrpc.getServiceDescriptor(), null, hub, clock, pool,
        heartbeats, plaintextSecrets, m, maxRequestRate, maxResourceNames));
    PER_TYPE.forEach((sd, type) -> defs.add(bind(sd, type, hub, clock, pool, heartbeats,
        plaintextSecrets, m, maxRequestRate, maxResourceNames)));
    return defs;
  }

  @SuppressWarnings("unchecked")
  private static ServerServiceDefinition bind(ServiceDescriptor sd, ResourceType type,
      DiscoveryHub hub, Clock clock, Executor pool, HeartbeatPolicy heartbeats,
      boolean plaintextSecrets, Marshallers marshallers, int maxRequestRate,
      int maxResourceNames) {
    // The stream methods parse requests with a shared-names marshaller: a new descriptor, same schema.
    ServiceDescriptor.Builder descriptor = ServiceDescriptor.newBuilder(sd.getName())
        .setSchemaDescriptor(sd.getSchemaDescriptor());
    List<MethodDescriptor<?, ?>> methods = new ArrayList<>();
    for (MethodDescriptor<?, ?> m : sd.getMethods()) {
      MethodDescriptor<?, ?> bound = m;
      if (m.getBareMethodName().startsWith("Stream")) {
        bound = ((MethodDescriptor<DiscoveryRequest, DiscoveryResponse>) m).toBuilder()
            .setRequestMarshaller(marshallers.requests())
            .setResponseMarshaller(marshallers.sotw()).build();
      } else if (m.getBareMethodName().startsWith("Delta")) {
        bound = ((MethodDescriptor<DeltaDiscoveryRequest, DeltaDiscoveryResponse>) m).toBuilder()
            .setRequestMarshaller(marshallers.deltaRequests())
            .setResponseMarshaller(marshallers.delta()).build();
      }
      methods.add(bound);
      descriptor.addMethod(bound);
    }
    ServerServiceDefinition.Builder b = ServerServiceDefinition.builder(descriptor.build());
    for (MethodDescriptor<?, ?> m : methods) {
      String method = m.getBareMethodName();
      if (method.startsWith("Stream")) {
        b.addMethod((MethodDescriptor<DiscoveryRequest, DiscoveryResponse>) m,
            ServerCalls.asyncBidiStreamingCall(responses -> new StreamHandler<>(hub,
                (type == null ? SotwStream.ads(clock, hub.sharing())
                    : SotwStream.perType(type, clock, hub.sharing()))
                    .withIdentity(PeerAddress.identity(), plaintextSecrets)
                    .withControlPlane(hub.controlPlane())
                    .withMaxResourceNames(maxResourceNames)
                    .withHeartbeats(heartbeats), responses,
                new SerialExecutor(pool), m.getFullMethodName(), clock,
                budget(maxRequestRate), marshallers.sotw()::serializedSize)));
      } else if (method.startsWith("Delta")) {
        b.addMethod((MethodDescriptor<DeltaDiscoveryRequest, DeltaDiscoveryResponse>) m,
            ServerCalls.asyncBidiStreamingCall(responses -> new StreamHandler<>(hub,
                (type == null ? DeltaStream.ads(clock, hub.sharing())
                    : DeltaStream.perType(type, clock, hub.sharing()))
                    .withIdentity(PeerAddress.identity(), plaintextSecrets)
                    .withControlPlane(hub.controlPlane())
                    .withMaxResourceNames(maxResourceNames)
                    .withHeartbeats(heartbeats), responses,
                new SerialExecutor(pool), m.getFullMethodName(), clock,
                budget(maxRequestRate), marshallers.delta()::serializedSize)));
      } else {
        b.addMethod((MethodDescriptor<Object, Object>) m, unimplemented(m));
      }
    }
    return b.build();
  }

  private static RequestBudget budget(int maxRequestRate) {
    return maxRequestRate <= 0 ? null : new RequestBudget(maxRequestRate, System.nanoTime());
  }

  /** The marshallers every xDS service of one server shares (and their caches). */
  private record Marshallers(SharedNamesMarshaller<DiscoveryRequest> requests,
      SharedNamesMarshaller<DeltaDiscoveryRequest> deltaRequests,
      SharedBodyMarshaller<DiscoveryResponse> sotw, SharedBodyMarshaller<DeltaDiscoveryResponse> delta) {}

  private static ServerCallHandler<Object, Object> unimplemented(MethodDescriptor<?, ?> m) {
    String why = m.getFullMethodName() + " is not served by this Meridian version";
    return switch (m.getType()) {
      case UNARY -> ServerCalls.asyncUnaryCall((req, obs) ->
          obs.onError(Status.UNIMPLEMENTED.withDescription(why).asRuntimeException()));
      default -> ServerCalls.asyncBidiStreamingCall(obs -> {
        obs.onError(Status.UNIMPLEMENTED.withDescription(why).asRuntimeException());
        return new io.grpc.stub.StreamObserver<>() {
          @Override public void onNext(Object value) {}
          @Override public void onError(Throwable t) {}
          @Override public void onCompleted() {}
        };
      });
    };
  }
}
