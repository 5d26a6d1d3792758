package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.meridian.internal.protocol.DeltaStream;
import dev.meridian.internal.protocol.NodeMatcher;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.Snapshot;
import dev.meridian.internal.protocol.SotwStream;
import dev.meridian.internal.protocol.XdsResource;
import dev.meridian.internal.protocol.XdsStream;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * DESIGN "Fan-out" (issue 19, "Indexed fan-out"): a config change is handed only to the streams of
 * its group that subscribe to a changed name of its type or to its wildcard, and every stream it
 * concerns gets it, also when the stream's subscription changes while the config does. Real
 * protocol streams behind real {@link StreamHandler}s, on a direct executor: each step completes
 * before the call returns, so the counts are exact and nothing needs waiting for.
 */
class IndexedFanOutTest {
  enum Variant { SOTW_ADS, SOTW_PER_TYPE, DELTA_ADS, DELTA_PER_TYPE }

  static final ResourceType EDS = ResourceType.ENDPOINT;
  final DiscoveryHub hub = new DiscoveryHub();
  final Clock clock = Clock.systemUTC();
  /** group → endpoint set name → port: what the next config serves. */
  final Map<String, Map<String, Integer>> served = new LinkedHashMap<>();

  static XdsResource endpoints(String name, int port) {
    return XdsResource.of(EDS, ClusterLoadAssignment.newBuilder().setClusterName(name)
        .addEndpoints(LocalityLbEndpoints.newBuilder().addLbEndpoints(LbEndpoint.newBuilder()
            .setEndpoint(Endpoint.newBuilder().setAddress(Address.newBuilder().setSocketAddress(
                SocketAddress.newBuilder().setAddress("127.0.0.1").setPortValue(port)))))).build());
  }

  /** Serves {@link #served}: group "gN" holds the nodes whose id starts with "gN-". */
  void publish() {
    List<ServedConfig.Group> groups = new ArrayList<>();
    Snapshot defaults = Snapshot.empty();
    for (var g : served.entrySet()) {
      List<XdsResource> rs = new ArrayList<>();
      g.getValue().forEach((n, port) -> rs.add(endpoints(n, port)));
      if (g.getKey().equals(ServedConfig.DEFAULT_GROUP)) {
        defaults = Snapshot.of(rs);
      } else {
        groups.add(new ServedConfig.Group(g.getKey(), new NodeMatcher(g.getKey() + "-*", null),
            Snapshot.of(rs)));
      }
    }
    hub.update(new ServedConfig(defaults, groups));
  }

  /** A client on one stream: subscribes, ACKs every response, remembers what it holds. */
  final class Peer {
    final Variant variant;
    final String nodeId;
    final StreamHandler<Message, Message> handler;
    final Map<String, Integer> holds = new HashMap<>();
    final List<String> names = new ArrayList<>();
    int responses;
    boolean sentNode;
    /** Runs once, when the next response arrives (before it is ACKed). */
    Runnable onNextResponse;

    @SuppressWarnings({"unchecked", "rawtypes"})
    Peer(Variant variant, String nodeId) {
      this.variant = variant;
      this.nodeId = nodeId;
      XdsStream stream = switch (variant) {
        case SOTW_ADS -> SotwStream.ads(clock, hub.sharing());
        case SOTW_PER_TYPE -> SotwStream.perType(EDS, clock, hub.sharing());
        case DELTA_ADS -> DeltaStream.ads(clock, hub.sharing());
        case DELTA_PER_TYPE -> DeltaStream.perType(EDS, clock, hub.sharing());
      };
      handler = new StreamHandler<>(hub, stream, new Responses(this),
          new SerialExecutor(Runnable::run), "test", clock);
    }

    boolean sotw() {
      return variant == Variant.SOTW_ADS || variant == Variant.SOTW_PER_TYPE;
    }

    boolean ads() {
      return variant == Variant.SOTW_ADS || variant == Variant.DELTA_ADS;
    }

    Node node() {
      return Node.newBuilder().setId(nodeId).build();
    }

    /** Subscribes to more names; none at all on the first request is the (legacy) wildcard. */
    Peer subscribe(String... more) {
      names.addAll(List.of(more));
      if (sotw()) {
        DiscoveryRequest.Builder b = DiscoveryRequest.newBuilder().addAllResourceNames(names);
        handler.onNext(first(b).build());
      } else {
        DeltaDiscoveryRequest.Builder b = DeltaDiscoveryRequest.newBuilder()
            .addAllResourceNamesSubscribe(List.of(more));
        if (!sentNode) {
          b.setNode(node());
        }
        if (ads()) {
          b.setTypeUrl(EDS.typeUrl());
        }
        sentNode = true;
        handler.onNext(b.build());
      }
      return this;
    }

    private DiscoveryRequest.Builder first(DiscoveryRequest.Builder b) {
      if (!sentNode) {
        b.setNode(node());
      }
      if (ads()) {
        b.setTypeUrl(EDS.typeUrl());
      }
      sentNode = true;
      return b;
    }

    void received(Message m) throws InvalidProtocolBufferException {
      responses++;
      if (m instanceof DiscoveryResponse r) {
        for (Any a : r.getResourcesList()) {
          hold(a);
        }
      } else {
        DeltaDiscoveryResponse r = (DeltaDiscoveryResponse) m;
        for (var res : r.getResourcesList()) {
          hold(res.getResource());
        }
        r.getRemovedResourcesList().forEach(holds::remove);
      }
      Runnable hook = onNextResponse;
      onNextResponse = null;
      if (hook != null) {
        hook.run();
      }
      if (m instanceof DiscoveryResponse r) {
        handler.onNext(first(DiscoveryRequest.newBuilder().setVersionInfo(r.getVersionInfo())
            .setResponseNonce(r.getNonce()).addAllResourceNames(names)).build());
      } else {
        DeltaDiscoveryRequest.Builder ack = DeltaDiscoveryRequest.newBuilder()
            .setResponseNonce(((DeltaDiscoveryResponse) m).getNonce());
        if (ads()) {
          ack.setTypeUrl(EDS.typeUrl());
        }
        handler.onNext(ack.build());
      }
    }

    private void hold(Any a) throws InvalidProtocolBufferException {
      ClusterLoadAssignment cla = a.unpack(ClusterLoadAssignment.class);
      holds.put(cla.getClusterName(), cla.getEndpoints(0).getLbEndpoints(0).getEndpoint()
          .getAddress().getSocketAddress().getPortValue());
    }
  }

  /** The transport side of a test stream: always ready, hands responses to its peer. */
  static final class Responses extends ServerCallStreamObserver<Message> {
    private final Peer peer;

    Responses(Peer peer) {
      this.peer = peer;
    }

    @Override
    public void onNext(Message value) {
      try {
        peer.received(value);
      } catch (InvalidProtocolBufferException e) {
        throw new AssertionError(e);
      }
    }

    @Override
    public void onError(Throwable t) {
      throw new AssertionError("stream closed", t);
    }

    @Override
    public void onCompleted() {}

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public void setOnReadyHandler(Runnable r) {}

    @Override
    public void setOnCancelHandler(Runnable r) {}

    @Override
    public void setCompression(String c) {}

    @Override
    public void setOnCloseHandler(Runnable r) {}

    @Override
    public void disableAutoInboundFlowControl() {}

    @Override
    public void request(int n) {}

    @Override
    public void setMessageCompression(boolean enable) {}
  }

  long pushedTo() {
    return hub.metrics().pushedTo();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void aChangeInOneGroupIsHandedOnlyToThatGroupsStreams(Variant v) {
    for (int g = 0; g < 10; g++) {
      served.put("g" + g, new LinkedHashMap<>(Map.of("e", 1000 + g)));
    }
    publish();
    List<Peer> peers = new ArrayList<>();
    for (int g = 0; g < 10; g++) {
      for (int i = 0; i < 10; i++) {
        peers.add(new Peer(v, "g" + g + "-" + i).subscribe("e"));
      }
    }
    peers.forEach(p -> p.responses = 0);
    long before = pushedTo();
    served.get("g3").put("e", 2003);
    publish();
    assertThat(pushedTo() - before).isEqualTo(10); // was 100: every stream, every change
    for (Peer p : peers) {
      boolean inG3 = p.nodeId.startsWith("g3-");
      assertThat(p.responses).as(p.nodeId).isEqualTo(inG3 ? 1 : 0);
      assertThat(p.holds.get("e")).as(p.nodeId).isEqualTo(inG3 ? 2003 : 1000 + p.nodeId.charAt(1) - '0');
    }
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void aNameChangeIsHandedOnlyToItsSubscribersAndTheWildcard(Variant v) {
    Map<String, Integer> eds = new LinkedHashMap<>();
    List<String> many = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      eds.put("e" + i, 1000 + i);
      many.add("e" + i);
    }
    served.put(ServedConfig.DEFAULT_GROUP, eds);
    publish();
    List<Peer> single = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      single.add(new Peer(v, "n" + i).subscribe("e" + i));
    }
    // Large subscriptions (the index scans these instead of indexing each name).
    Peer large = new Peer(v, "large").subscribe(many.toArray(String[]::new));
    Peer largeWithout = new Peer(v, "large-without").subscribe(
        many.subList(10, 100).toArray(String[]::new));
    Peer wildcard = new Peer(v, "wildcard").subscribe();
    assertThat(wildcard.holds).hasSize(100);
    long before = pushedTo();
    eds.put("e5", 2005);
    publish();
    // Spec "How the client specifies what resources to return": e5's subscribers and the wildcard.
    assertThat(pushedTo() - before).isEqualTo(3);
    for (Peer p : List.of(single.get(5), large, wildcard)) {
      assertThat(p.holds.get("e5")).as(p.nodeId).isEqualTo(2005);
    }
    assertThat(largeWithout.holds).doesNotContainKey("e5");
    before = pushedTo();
    eds.put("e200", 1200); // a new name: only the wildcard asked for it
    publish();
    assertThat(pushedTo() - before).isEqualTo(1);
    assertThat(wildcard.holds.get("e200")).isEqualTo(1200);
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void aStreamThatUnsubscribesIsNoLongerHandedTheName(Variant v) {
    served.put(ServedConfig.DEFAULT_GROUP, new LinkedHashMap<>(Map.of("a", 1, "b", 2)));
    publish();
    Peer p = new Peer(v, "n").subscribe("a", "b");
    if (p.sotw()) {
      p.names.remove("a");
      p.subscribe();
    } else {
      p.handler.onNext(DeltaDiscoveryRequest.newBuilder().setTypeUrl(p.ads() ? EDS.typeUrl() : "")
          .addResourceNamesUnsubscribe("a").build());
    }
    long before = pushedTo();
    served.get(ServedConfig.DEFAULT_GROUP).put("a", 10);
    publish();
    assertThat(pushedTo() - before).isZero();
    served.get(ServedConfig.DEFAULT_GROUP).put("b", 20);
    publish();
    assertThat(p.holds.get("b")).isEqualTo(20);
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void redefinedGroupsReachEveryStreamAndAMovedStreamGetsItsNewGroup(Variant v) {
    served.put("g1", new LinkedHashMap<>(Map.of("e", 1)));
    served.put("g2", new LinkedHashMap<>(Map.of("e", 2)));
    publish();
    Peer p = new Peer(v, "g2-x").subscribe("e");
    assertThat(p.holds.get("e")).isEqualTo(2);
    served.remove("g2"); // its nodes fall to the default group
    served.put(ServedConfig.DEFAULT_GROUP, new LinkedHashMap<>(Map.of("e", 3)));
    publish();
    assertThat(p.holds.get("e")).isEqualTo(3);
  }

  /**
   * The race the index must not lose: a stream subscribes to a name under one config, and a new
   * config changing that name lands before the stream's new interest is indexed (here: while the
   * stream is sending its answer). The hub does not hand it the change; the stream sees the newer
   * config when it publishes and catches up itself.
   */
  @ParameterizedTest
  @EnumSource(Variant.class)
  void aSubscriptionRacingAConfigChangeStillGetsTheChange(Variant v) {
    served.put(ServedConfig.DEFAULT_GROUP, new LinkedHashMap<>(Map.of("a", 1, "x", 1)));
    publish();
    Peer p = new Peer(v, "n").subscribe("a");
    p.onNextResponse = () -> {
      served.get(ServedConfig.DEFAULT_GROUP).put("x", 2);
      publish();
    };
    p.subscribe("x");
    assertThat(p.holds.get("x")).isEqualTo(2);
  }

  /** A wildcard stream is handed every change of its type in its group, new names included. */
  @ParameterizedTest
  @EnumSource(Variant.class)
  void aWildcardStreamHasEveryChangeOfItsGroupAfterManyUpdates(Variant v) {
    Map<String, Integer> eds = new LinkedHashMap<>(Map.of("a", 1));
    served.put(ServedConfig.DEFAULT_GROUP, eds);
    publish();
    Peer w = new Peer(v, "w").subscribe();
    Peer other = new Peer(v, "o").subscribe("zzz");
    for (int i = 0; i < 20; i++) {
      eds.put("a", 100 + i);
      eds.put("n" + i, i);
      publish();
    }
    assertThat(w.holds).containsEntry("a", 119).hasSize(21);
    assertThat(other.responses).isLessThanOrEqualTo(1); // its answer that zzz does not exist, at most
  }
}
