package dev.meridian.client;

import static dev.meridian.client.TestResources.edsCluster;
import static dev.meridian.client.TestResources.wrapped;
import static dev.meridian.client.XdsClientDeltaTest.delta;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.rpc.Code;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.envoyproxy.envoy.service.discovery.v3.ResourceError;
import io.envoyproxy.envoy.service.discovery.v3.ResourceName;
import io.grpc.Status;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a real server cannot easily be made to do, scripted: a glob collection's members across a
 * Delta reconnect and after the collection is unwatched (xDS TP1 "Glob"), and resource_errors for
 * names nobody watches (TP3). {@link GlobCollectionTest} and {@link ResourceErrorsTest} run the
 * main scenarios against Meridian.
 */
class GlobWatchScriptedTest {
  private static final String MINE = "xdstp://mine.example/envoy.config.cluster.v3.Cluster/";
  private static final String GLOB = MINE + "svc/*";
  private static final Bootstrap.ServerInfo SERVER =
      new Bootstrap.ServerInfo("fake:1", Bootstrap.ChannelCreds.INSECURE, List.of());

  private final FakeTransport transport = new FakeTransport();
  private final XdsClient client = new XdsClient(
      new Bootstrap(List.of(SERVER), Node.newBuilder().setId("n1").build(),
          Map.of("mine.example", new Bootstrap.Authority(null, List.of())), null),
      XdsClient.Options.defaults().withProtocol(XdsClient.Protocol.DELTA)
          .withCallbackExecutor(Runnable::run).withScheduler(new FakeScheduler())
          .withRandom(() -> 0.5),
      transport);

  @AfterEach
  void tearDown() {
    client.close();
  }

  private static Resource member(String id, String version) {
    return wrapped(MINE + id, edsCluster(MINE + id), version, 0);
  }

  // Spec "Incremental xDS" (reconnect): initial_resource_versions lists what the client holds,
  // the members held through a collection too, so that the server resends nothing of them.
  @Test
  void globMembersAreHeldAcrossAReconnectAndForgottenWithTheCollection() {
    RecordingWatcher members = new RecordingWatcher();
    Watch w = client.watch(ResourceType.CLUSTER, GLOB, members);
    assertThat(transport.lastDelta().next().getResourceNamesSubscribeList()).containsExactly(GLOB);
    transport.lastDelta().respond(delta("1", List.of(member("svc/a", "va"), member("svc/b", "vb"),
        member("other/c", "vc")))); // not a member: not asked for, ignored
    assertThat(members.take()).containsExactly("changed:" + MINE + "svc/a",
        "changed:" + MINE + "svc/b", "processed:sys-1");

    transport.lastDelta().fail(Status.UNAVAILABLE);
    assertThat(members.take()).containsExactly("error:UNAVAILABLE"); // the only server: told
    DeltaDiscoveryRequest again = transport.lastDelta().next();
    assertThat(again.getResourceNamesSubscribeList()).containsExactly(GLOB);
    assertThat(again.getInitialResourceVersionsMap()).containsOnly(
        Map.entry(MINE + "svc/a", "va"), Map.entry(MINE + "svc/b", "vb"));

    // Unwatched: unsubscribed, no callbacks, and the members are forgotten.
    w.cancel();
    assertThat(transport.lastDelta().next().getResourceNamesUnsubscribeList())
        .containsExactly(GLOB);
    assertThat(members.take()).isEmpty();
    RecordingWatcher fresh = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, GLOB, fresh);
    assertThat(fresh.take()).isEmpty();
  }

  // TP3 / gRFC A88: an error for a name nobody here watches changes nothing, and a response that
  // carries errors is ACKed like any other (the errors are not the response's problems).
  @Test
  void resourceErrorsForUnwatchedNamesAreIgnoredAndTheResponseIsAcked() {
    RecordingWatcher a = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, "a", a);
    transport.lastDelta().requests.clear();
    transport.lastDelta().respond(delta("1", List.of(wrapped("a", edsCluster("a"), "va", 0)))
        .toBuilder().addResourceErrors(ResourceError.newBuilder()
            .setResourceName(ResourceName.newBuilder().setName("nobody-asked"))
            .setErrorDetail(com.google.rpc.Status.newBuilder().setCode(Code.NOT_FOUND_VALUE)))
        .build());
    assertThat(a.take()).containsExactly("changed:a", "processed:sys-1");
    DeltaDiscoveryRequest ack = transport.lastDelta().next();
    assertThat(ack.getResponseNonce()).isEqualTo("1");
    assertThat(ack.hasErrorDetail()).isFalse();
  }
}
