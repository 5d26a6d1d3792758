package dev.meridian.internal.server;

import com.google.protobuf.Timestamp;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.XdsStream.TypeStatus;
import dev.meridian.internal.protocol.TypeSnapshot;
import io.envoyproxy.envoy.admin.v3.UpdateFailureState;
import io.envoyproxy.envoy.service.status.v3.ClientConfig;
import io.envoyproxy.envoy.service.status.v3.ClientStatusDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.status.v3.ClientStatusRequest;
import io.envoyproxy.envoy.service.status.v3.ClientStatusResponse;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Server-side Client Status Discovery Service (envoy.service.status.v3, csds.proto): for each
 * connected client the per-resource status as this server sees it, both as the client would report
 * it ({@code client_status}: REQUESTED, ACKED, NACKED with {@code error_state}, DOES_NOT_EXIST) and as
 * the management server knows it ({@code config_status}: SYNCED, NOT_SENT, STALE, ERROR).
 *
 * <p>One {@link ClientConfig} per node (id and cluster), merging its streams (a node on per-type
 * services has several). Streams that have not sent their first request have no node yet and are
 * not reported.
 */
final class CsdsService extends ClientStatusDiscoveryServiceGrpc.ClientStatusDiscoveryServiceImplBase {
  private final DiscoveryHub hub;
  private final Executor executor;

  CsdsService(DiscoveryHub hub, Executor executor) {
    this.hub = hub;
    this.executor = executor;
  }

  @Override
  public void fetchClientStatus(ClientStatusRequest request,
      StreamObserver<ClientStatusResponse> responses) {
    answer(request).whenCompleteAsync((r, t) -> {
      if (t != null) {
        responses.onError(toStatus(t).asRuntimeException());
      } else {
        responses.onNext(r);
        responses.onCompleted();
      }
    }, executor);
  }

  @Override
  public StreamObserver<ClientStatusRequest> streamClientStatus(
      StreamObserver<ClientStatusResponse> responses) {
    SerialExecutor serial = new SerialExecutor(executor);
    ServerCallStreamObserver<ClientStatusResponse> call =
        (ServerCallStreamObserver<ClientStatusResponse>) responses;
    return new StreamObserver<>() {
      private boolean closed;

      @Override
      public void onNext(ClientStatusRequest request) {
        // Answers go out in request order: each waits for the previous one.
        CompletableFuture<ClientStatusResponse> f = answer(request);
        serial.execute(() -> {
          try {
            ClientStatusResponse r = f.join();
            if (!closed && !call.isCancelled()) {
              responses.onNext(r);
            }
          } catch (RuntimeException e) {
            if (!closed) {
              closed = true;
              responses.onError(toStatus(e).asRuntimeException());
            }
          }
        });
      }

      @Override
      public void onError(Throwable t) {
        serial.execute(() -> closed = true);
      }

      @Override
      public void onCompleted() {
        serial.execute(() -> {
          if (!closed) {
            closed = true;
            responses.onCompleted();
          }
        });
      }
    };
  }

  private static Status toStatus(Throwable t) {
    Throwable c = t instanceof java.util.concurrent.CompletionException && t.getCause() != null
        ? t.getCause() : t;
    return c instanceof IllegalArgumentException
        ? Status.INVALID_ARGUMENT.withDescription(c.getMessage())
        : Status.fromThrowable(c);
  }

  CompletableFuture<ClientStatusResponse> answer(ClientStatusRequest request) {
    try {
      CsdsNodeMatchers.validate(request.getNodeMatchersList());
    } catch (IllegalArgumentException e) {
      return CompletableFuture.failedFuture(e);
    }
    return hub.registry().statuses()
        .thenApply(all -> build(all, hub.current(), request, hub.controlPlaneId()));
  }

  /** Metadata key under which CSDS shows a stream's verified identity (issue 20). */
  static final String IDENTITY_KEY = "dev.meridian.identity";
  /** Its type, {@code uri} or {@code dns}, as {@code /clients} shows it. */
  static final String IDENTITY_TYPE_KEY = "dev.meridian.identity_type";

  /**
   * Metadata key under which CSDS shows the server that serves the client (issue 21): this
   * server's {@code control_plane.identifier}, as every response to the client carries it.
   * csds.proto's ClientConfig has no field for it; the node's metadata is where CSDS readers look.
   */
  static final String CONTROL_PLANE_KEY = "dev.meridian.control_plane";

  /**
   * The node as the client declared it (its metadata redacted like config: a bootstrap may carry
   * tokens there), plus the identity its certificate proved, if any, and the server that serves
   * it, if it has an identifier.
   */
  private static io.envoyproxy.envoy.config.core.v3.Node withIdentity(
      io.envoyproxy.envoy.config.core.v3.Node declared, String identity, String controlPlaneId) {
    io.envoyproxy.envoy.config.core.v3.Node node = (io.envoyproxy.envoy.config.core.v3.Node)
        dev.meridian.internal.protocol.Redaction.redact(declared);
    if (identity == null && controlPlaneId == null) {
      return node;
    }
    io.envoyproxy.envoy.config.core.v3.Node.Builder b = node.toBuilder();
    if (identity != null) {
      b.getMetadataBuilder().putFields(IDENTITY_KEY,
          com.google.protobuf.Value.newBuilder().setStringValue(identity).build());
      String type = dev.meridian.internal.protocol.Identity.typeOf(identity);
      if (type != null) {
        b.getMetadataBuilder().putFields(IDENTITY_TYPE_KEY,
            com.google.protobuf.Value.newBuilder().setStringValue(type).build());
      }
    }
    if (controlPlaneId != null) {
      b.getMetadataBuilder().putFields(CONTROL_PLANE_KEY,
          com.google.protobuf.Value.newBuilder().setStringValue(controlPlaneId).build());
    }
    return b.build();
  }

  /** {@code controlPlaneId}: this server's identifier, shown in each node's metadata; null: none. */
  static ClientStatusResponse build(List<ClientStatus> statuses, ServedConfig config,
      ClientStatusRequest request, String controlPlaneId) {
    Map<String, ClientConfig.Builder> byNode = new LinkedHashMap<>();
    for (ClientStatus s : statuses) {
      if (s.node() == null || !CsdsNodeMatchers.matches(request.getNodeMatchersList(), s.node())) {
        continue;
      }
      ClientConfig.Builder cc = byNode.computeIfAbsent(
          s.node().getId() + "\u0000" + s.node().getCluster(),
          k -> ClientConfig.newBuilder().setNode(withIdentity(s.node(), s.stream().identity(),
              controlPlaneId)));
      for (TypeStatus t : s.types()) {
        TypeSnapshot current = config.snapshot(s.group()).get(t.type());
        for (ResourceStatuses.ResourceState r : ResourceStatuses.of(t, current)) {
          ClientConfig.GenericXdsConfig.Builder g = ClientConfig.GenericXdsConfig.newBuilder()
              .setTypeUrl(t.type().typeUrl())
              .setName(r.name())
              .setVersionInfo(t.ackedVersion())
              .setClientStatus(r.clientStatus())
              .setConfigStatus(r.configStatus());
          if (!request.getExcludeResourceContents() && r.served() != null) {
            // csds.proto: for ERROR the attached config is the latest (rejected) one; otherwise the
            // one the client runs. Only attach what this server still holds at that version.
            String want = r.rejectedVersion() != null ? r.rejectedVersion() : r.version();
            if (r.served().version().equals(want)) {
              g.setXdsConfig(AdminJson.redacted(r.served())); // secrets: name only
            }
          }
          if (r.nack() != null) {
            Instant at = r.nack().at();
            g.setErrorState(UpdateFailureState.newBuilder()
                .setDetails(r.nack().message())
                .setVersionInfo(r.nack().rejectedVersion())
                .setLastUpdateAttempt(Timestamp.newBuilder().setSeconds(at.getEpochSecond())
                    .setNanos(at.getNano())));
          }
          cc.addGenericXdsConfigs(g);
        }
      }
    }
    ClientStatusResponse.Builder out = ClientStatusResponse.newBuilder();
    byNode.values().forEach(out::addConfig);
    return out.build();
  }
}
