package dev.meridian.e2e;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.xds.E2eXdsAccess;
import io.grpc.xds.shaded.io.envoyproxy.envoy.admin.v3.ClientResourceStatus;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.status.v3.ClientConfig;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.status.v3.ClientConfig.GenericXdsConfig;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.status.v3.ClientStatusDiscoveryServiceGrpc;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.status.v3.ClientStatusRequest;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The clients' own view of their xDS state, read through grpc-java's CSDS service
 * ({@code io.grpc.xds.CsdsService}: {@code envoy.service.status.v3.ClientStatusDiscoveryService},
 * gRFC A40), served in-process.
 */
final class Csds implements AutoCloseable {
  static final String LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";
  static final String RDS = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
  static final String CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
  static final String EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

  private final Server server;
  private final ManagedChannel channel;

  Csds() throws IOException {
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).directExecutor()
        .addService(E2eXdsAccess.csds()).build().start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
  }

  /** Every resource the client with this target (its CSDS client_scope) knows, with its status. */
  List<GenericXdsConfig> resources(XdsTestClient client) {
    for (ClientConfig c : ClientStatusDiscoveryServiceGrpc.newBlockingStub(channel)
        .withDeadlineAfter(5, TimeUnit.SECONDS)
        .fetchClientStatus(ClientStatusRequest.getDefaultInstance()).getConfigList()) {
      if (c.getClientScope().equals(client.target)) {
        return c.getGenericXdsConfigsList();
      }
    }
    return List.of();
  }

  /** The client's entry for one resource, or null if it has none. */
  GenericXdsConfig resource(XdsTestClient client, String typeUrl, String name) {
    for (GenericXdsConfig r : resources(client)) {
      if (r.getTypeUrl().equals(typeUrl) && r.getName().equals(name)) {
        return r;
      }
    }
    return null;
  }

  /** The resource's entry once it has {@code status}, or null. */
  GenericXdsConfig withStatus(XdsTestClient client, String typeUrl, String name,
      ClientResourceStatus status) {
    GenericXdsConfig r = resource(client, typeUrl, name);
    return r != null && r.getClientStatus() == status ? r : null;
  }

  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow();
    server.shutdownNow();
    server.awaitTermination(5, TimeUnit.SECONDS);
  }
}
