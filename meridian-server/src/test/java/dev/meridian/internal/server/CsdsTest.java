package dev.meridian.internal.server;

import static dev.meridian.xds.ResourceType.CLUSTER;
import static dev.meridian.xds.ResourceType.ENDPOINT;
import static dev.meridian.xds.ResourceType.LISTENER;
import static dev.meridian.internal.server.OpsFixture.CDS;
import static dev.meridian.internal.server.OpsFixture.EDS;
import static dev.meridian.internal.server.OpsFixture.LDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.admin.v3.ClientResourceStatus;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.status.v3.ClientConfig;
import io.envoyproxy.envoy.service.status.v3.ClientConfig.GenericXdsConfig;
import io.envoyproxy.envoy.service.status.v3.ClientStatusDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.status.v3.ClientStatusRequest;
import io.envoyproxy.envoy.service.status.v3.ClientStatusResponse;
import io.envoyproxy.envoy.service.status.v3.ConfigStatus;
import io.envoyproxy.envoy.type.matcher.v3.NodeMatcher;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Server-side CSDS (envoy.service.status.v3.ClientStatusDiscoveryService) queried with a raw client
 * on the xDS port, against raw ADS clients that ACK, NACK and ask for a missing resource.
 */
class CsdsTest {
  @TempDir Path dir;
  OpsFixture f;
  ClientStatusDiscoveryServiceGrpc.ClientStatusDiscoveryServiceBlockingStub csds;
  DiscoveryResponse lds;

  @BeforeEach
  void start() throws Exception {
    f = new OpsFixture(dir);
    csds = ClientStatusDiscoveryServiceGrpc.newBlockingStub(f.channel)
        .withDeadlineAfter(10, TimeUnit.SECONDS);
    RawXdsClient.Sotw a = f.ads("envoy-a", "edge");
    a.ack(a.subscribe(CLUSTER));
    DiscoveryResponse eds = a.subscribe(ENDPOINT, "greeter-v1", "missing");
    a.ack(eds, "greeter-v1", "missing");
    lds = a.subscribe(LISTENER);
    a.nack(lds, "", "listener 'http': bad filter chain");
    RawXdsClient.Sotw b = f.ads("gateway-b", "edge");
    b.subscribe(CLUSTER); // never ACKed: in flight
    OpsFixture.await("both streams reported as expected", () -> {
      ClientStatusResponse r = csds.fetchClientStatus(ClientStatusRequest.getDefaultInstance());
      return r.getConfigCount() == 2 && find(config(r, "envoy-a"), LDS, "http").getClientStatus()
          == ClientResourceStatus.NACKED;
    });
  }

  @AfterEach
  void stop() throws Exception {
    f.close();
  }

  static ClientStatusRequest byNodeId(StringMatcher m) {
    return ClientStatusRequest.newBuilder()
        .addNodeMatchers(NodeMatcher.newBuilder().setNodeId(m)).build();
  }

  static ClientConfig config(ClientStatusResponse r, String nodeId) {
    return r.getConfigList().stream().filter(c -> c.getNode().getId().equals(nodeId)).findFirst()
        .orElseThrow(() -> new AssertionError("no " + nodeId + " in " + r));
  }

  static GenericXdsConfig find(ClientConfig c, String typeUrl, String name) {
    return c.getGenericXdsConfigsList().stream()
        .filter(g -> g.getTypeUrl().equals(typeUrl) && g.getName().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError("no " + typeUrl + " " + name + " in " + c));
  }

  @Test
  void fetchReportsAckedNackedRequestedAndDoesNotExistPerResource() {
    ClientStatusResponse r = csds.fetchClientStatus(
        byNodeId(StringMatcher.newBuilder().setExact("envoy-a").build()));
    assertThat(r.getConfigList()).hasSize(1);
    ClientConfig c = r.getConfig(0);
    assertThat(c.getNode().getCluster()).isEqualTo("edge");

    GenericXdsConfig v1 = find(c, CDS, "greeter-v1");
    assertThat(v1.getClientStatus()).isEqualTo(ClientResourceStatus.ACKED);
    assertThat(v1.getConfigStatus()).isEqualTo(ConfigStatus.SYNCED);
    assertThat(v1.getVersionInfo()).isNotEmpty();
    assertThat(v1.getXdsConfig().getTypeUrl()).isEqualTo(CDS);
    assertThat(find(c, CDS, "greeter-v2").getClientStatus()).isEqualTo(ClientResourceStatus.ACKED);

    assertThat(find(c, EDS, "greeter-v1").getClientStatus()).isEqualTo(ClientResourceStatus.ACKED);
    GenericXdsConfig missing = find(c, EDS, "missing");
    assertThat(missing.getClientStatus()).isEqualTo(ClientResourceStatus.DOES_NOT_EXIST);
    assertThat(missing.hasXdsConfig()).isFalse();

    // csds.proto: ERROR carries the rejected config and error_state with the client's message.
    GenericXdsConfig http = find(c, LDS, "http");
    assertThat(http.getClientStatus()).isEqualTo(ClientResourceStatus.NACKED);
    assertThat(http.getConfigStatus()).isEqualTo(ConfigStatus.ERROR);
    assertThat(http.getVersionInfo()).isEmpty(); // nothing of this type was ever accepted
    assertThat(http.getErrorState().getDetails()).isEqualTo("listener 'http': bad filter chain");
    assertThat(http.getErrorState().getVersionInfo()).isEqualTo(lds.getVersionInfo());
    assertThat(http.getErrorState().getLastUpdateAttempt().getSeconds()).isPositive();
    assertThat(http.getXdsConfig().getTypeUrl()).isEqualTo(LDS);
  }

  @Test
  void anUnackedResponseIsRequestedAndStale() {
    ClientConfig c = csds.fetchClientStatus(
        byNodeId(StringMatcher.newBuilder().setPrefix("gateway").build())).getConfig(0);
    GenericXdsConfig v1 = find(c, CDS, "greeter-v1");
    assertThat(v1.getClientStatus()).isEqualTo(ClientResourceStatus.REQUESTED);
    assertThat(v1.getConfigStatus()).isEqualTo(ConfigStatus.STALE);
  }

  @Test
  void nodeMatchersAreOredAndFilter() {
    assertThat(csds.fetchClientStatus(byNodeId(StringMatcher.newBuilder().setExact("nobody")
        .build())).getConfigCount()).isZero();
    assertThat(csds.fetchClientStatus(byNodeId(StringMatcher.newBuilder().setSuffix("-A")
        .setIgnoreCase(true).build())).getConfig(0).getNode().getId()).isEqualTo("envoy-a");
    ClientStatusRequest either = ClientStatusRequest.newBuilder()
        .addNodeMatchers(NodeMatcher.newBuilder().setNodeId(StringMatcher.newBuilder().setExact("envoy-a")))
        .addNodeMatchers(NodeMatcher.newBuilder().setNodeId(StringMatcher.newBuilder()
            .setSafeRegex(io.envoyproxy.envoy.type.matcher.v3.RegexMatcher.newBuilder()
                .setRegex("gate.*"))))
        .build();
    assertThat(csds.fetchClientStatus(either).getConfigCount()).isEqualTo(2);
    assertThat(csds.fetchClientStatus(ClientStatusRequest.newBuilder()
        .setExcludeResourceContents(true).build()).getConfigList())
        .allSatisfy(c -> assertThat(c.getGenericXdsConfigsList())
            .noneMatch(GenericXdsConfig::hasXdsConfig));
  }

  @Test
  void anUnsupportedMatcherIsInvalidArgument() {
    ClientStatusRequest custom = byNodeId(StringMatcher.newBuilder()
        .setCustom(com.github.xds.core.v3.TypedExtensionConfig.getDefaultInstance()).build());
    assertThatThrownBy(() -> csds.fetchClientStatus(custom))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
  }

  @Test
  void streamAnswersEachRequestInOrder() throws Exception {
    BlockingQueue<ClientStatusResponse> got = new LinkedBlockingQueue<>();
    StreamObserver<ClientStatusRequest> req = ClientStatusDiscoveryServiceGrpc.newStub(f.channel)
        .streamClientStatus(new StreamObserver<>() {
          @Override public void onNext(ClientStatusResponse r) {
            got.add(r);
          }

          @Override public void onError(Throwable t) {}

          @Override public void onCompleted() {}
        });
    req.onNext(byNodeId(StringMatcher.newBuilder().setExact("envoy-a").build()));
    req.onNext(byNodeId(StringMatcher.newBuilder().setExact("nobody").build()));
    req.onNext(ClientStatusRequest.getDefaultInstance());
    assertThat(got.poll(10, TimeUnit.SECONDS).getConfigCount()).isEqualTo(1);
    assertThat(got.poll(10, TimeUnit.SECONDS).getConfigCount()).isZero();
    assertThat(got.poll(10, TimeUnit.SECONDS).getConfigCount()).isEqualTo(2);
    req.onCompleted();
  }
}
