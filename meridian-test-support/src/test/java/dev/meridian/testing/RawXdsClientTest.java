package dev.meridian.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.cluster.v3.ClusterDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.route.v3.VirtualHostDiscoveryServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The client against a fake server that records each request and answers as the test says. */
class RawXdsClientTest {
  static final String CDS = ResourceType.CLUSTER.typeUrl();
  static final String VHDS = ResourceType.VIRTUAL_HOST.typeUrl();

  /** One server stream: the requests it received and its way back to the client. */
  static final class Peer<Q, R> {
    final BlockingQueue<Q> requests = new LinkedBlockingQueue<>();
    final BlockingQueue<StreamObserver<R>> opened = new LinkedBlockingQueue<>();

    StreamObserver<Q> open(StreamObserver<R> out) {
      opened.add(out);
      return new StreamObserver<>() {
        @Override public void onNext(Q q) {
          requests.add(q);
        }

        @Override public void onError(Throwable t) {}

        @Override public void onCompleted() {
          out.onCompleted();
        }
      };
    }

    Q request() throws InterruptedException {
      Q q = requests.poll(10, TimeUnit.SECONDS);
      assertThat(q).as("a request").isNotNull();
      return q;
    }

    StreamObserver<R> stream() throws InterruptedException {
      StreamObserver<R> out = opened.poll(10, TimeUnit.SECONDS);
      assertThat(out).as("a stream").isNotNull();
      return out;
    }
  }

  final Peer<DiscoveryRequest, DiscoveryResponse> sotw = new Peer<>();
  final Peer<DeltaDiscoveryRequest, DeltaDiscoveryResponse> delta = new Peer<>();
  Server server;
  ManagedChannel channel;

  @BeforeEach
  void start() throws Exception {
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name)
        .addService(new AggregatedDiscoveryServiceGrpc.AggregatedDiscoveryServiceImplBase() {
          @Override public StreamObserver<DiscoveryRequest> streamAggregatedResources(
              StreamObserver<DiscoveryResponse> out) {
            return sotw.open(out);
          }

          @Override public StreamObserver<DeltaDiscoveryRequest> deltaAggregatedResources(
              StreamObserver<DeltaDiscoveryResponse> out) {
            return delta.open(out);
          }
        })
        .addService(new ClusterDiscoveryServiceGrpc.ClusterDiscoveryServiceImplBase() {
          @Override public StreamObserver<DiscoveryRequest> streamClusters(
              StreamObserver<DiscoveryResponse> out) {
            return sotw.open(out);
          }
        })
        .addService(new VirtualHostDiscoveryServiceGrpc.VirtualHostDiscoveryServiceImplBase() {
          @Override public StreamObserver<DeltaDiscoveryRequest> deltaVirtualHosts(
              StreamObserver<DeltaDiscoveryResponse> out) {
            return delta.open(out);
          }
        })
        .build().start();
    channel = InProcessChannelBuilder.forName(name).build();
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  static DiscoveryResponse cds(String version, String nonce) {
    return DiscoveryResponse.newBuilder().setTypeUrl(CDS).setVersionInfo(version).setNonce(nonce)
        .build();
  }

  @Test
  void sotwAdsSendsTheNodeOnceAndTypeUrlsAndAcksAndNacksWhatItTook() throws Exception {
    Node node = Node.newBuilder().setId("n").setCluster("edge").build();
    RawXdsClient.Sotw c = RawXdsClient.sotwAds(channel, node);
    c.send(ResourceType.CLUSTER, "", "", "a", "b");
    DiscoveryRequest first = sotw.request();
    assertThat(first.getNode()).isEqualTo(node);
    assertThat(first.getTypeUrl()).isEqualTo(CDS);
    assertThat(first.getResourceNamesList()).containsExactly("a", "b");

    StreamObserver<DiscoveryResponse> out = sotw.stream();
    out.onNext(cds("1", "n1"));
    DiscoveryResponse r = c.take(ResourceType.CLUSTER);
    c.ack(r, "a");
    DiscoveryRequest ack = sotw.request();
    assertThat(ack.hasNode()).isFalse();
    assertThat(ack.getTypeUrl()).isEqualTo(CDS);
    assertThat(ack.getVersionInfo()).isEqualTo("1");
    assertThat(ack.getResponseNonce()).isEqualTo("n1");
    assertThat(ack.getResourceNamesList()).containsExactly("a");

    out.onNext(cds("2", "n2"));
    c.nack(c.take(), "1", "bad cluster");
    DiscoveryRequest nack = sotw.request();
    assertThat(nack.getVersionInfo()).isEqualTo("1");
    assertThat(nack.getResponseNonce()).isEqualTo("n2");
    assertThat(nack.getErrorDetail().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
    assertThat(nack.getErrorDetail().getMessage()).isEqualTo("bad cluster");
  }

  @Test
  void aRequestBuiltByTheTestKeepsItsOwnNodeAndGetsNoneAdded() throws Exception {
    RawXdsClient.Sotw c = RawXdsClient.sotwAds(channel, "default-node");
    Node own = Node.newBuilder().setId("own").addClientFeatures("f").build();
    c.send(DiscoveryRequest.newBuilder().setTypeUrl("type.googleapis.com/not.a.Type").setNode(own));
    c.send(DiscoveryRequest.newBuilder().setTypeUrl(CDS));
    assertThat(sotw.request().getNode()).isEqualTo(own);
    DiscoveryRequest second = sotw.request();
    assertThat(second.hasNode()).isFalse();
    assertThat(second.getTypeUrl()).isEqualTo(CDS);
  }

  @Test
  void perTypeRequestsCarryNoTypeUrl() throws Exception {
    RawXdsClient.Sotw c = RawXdsClient.sotwPerType(channel, ResourceType.CLUSTER, "n");
    assertThat(c.ads()).isFalse();
    c.send(ResourceType.CLUSTER, "", "");
    DiscoveryRequest first = sotw.request();
    assertThat(first.getNode().getId()).isEqualTo("n");
    assertThat(first.getTypeUrl()).isEmpty();
    sotw.stream().onNext(cds("1", "n1"));
    c.ack(c.take());
    assertThat(sotw.request().getTypeUrl()).isEmpty();
  }

  @Test
  void deltaVirtualHostsIsReachedAndAcksAndNacksGoByNonce() throws Exception {
    RawXdsClient.Delta c = RawXdsClient.deltaPerType(channel, ResourceType.VIRTUAL_HOST, "n");
    c.send(ResourceType.VIRTUAL_HOST, DeltaDiscoveryRequest.newBuilder()
        .addResourceNamesSubscribe("routes/host"));
    DeltaDiscoveryRequest first = delta.request();
    assertThat(first.getNode().getId()).isEqualTo("n");
    assertThat(first.getTypeUrl()).isEmpty();
    assertThat(first.getResourceNamesSubscribeList()).containsExactly("routes/host");
    StreamObserver<DeltaDiscoveryResponse> out = delta.stream();
    out.onNext(DeltaDiscoveryResponse.newBuilder().setTypeUrl(VHDS).setNonce("n1").build());
    c.ack(c.take(ResourceType.VIRTUAL_HOST));
    DeltaDiscoveryRequest ack = delta.request();
    assertThat(ack.hasNode()).isFalse();
    assertThat(ack.getResponseNonce()).isEqualTo("n1");
    assertThat(ack.hasErrorDetail()).isFalse();
    out.onNext(DeltaDiscoveryResponse.newBuilder().setTypeUrl(VHDS).setNonce("n2").build());
    c.nack(c.take(), "no");
    DeltaDiscoveryRequest nack = delta.request();
    assertThat(nack.getResponseNonce()).isEqualTo("n2");
    assertThat(nack.getErrorDetail().getMessage()).isEqualTo("no");
  }

  @Test
  void deltaAdsSubscribesWithTheTypeUrlAndTakesTheAnswer() throws Exception {
    RawXdsClient.Delta c = RawXdsClient.deltaAds(channel, "n");
    AtomicReference<DeltaDiscoveryRequest> seen = new AtomicReference<>();
    Thread answer = new Thread(() -> {
      try {
        seen.set(delta.request());
        delta.stream().onNext(DeltaDiscoveryResponse.newBuilder().setTypeUrl(CDS).setNonce("1")
            .build());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    answer.start();
    assertThat(c.subscribe(ResourceType.CLUSTER, "*").getNonce()).isEqualTo("1");
    answer.join(10_000);
    assertThat(seen.get().getTypeUrl()).isEqualTo(CDS);
    assertThat(seen.get().getNode().getId()).isEqualTo("n");
    assertThat(seen.get().getResourceNamesSubscribeList()).containsExactly("*");
  }

  @Test
  void takeOfTheWrongTypeFails() throws Exception {
    RawXdsClient.Sotw c = RawXdsClient.sotwAds(channel, "n");
    c.send(ResourceType.CLUSTER, "", "");
    sotw.stream().onNext(cds("1", "n1"));
    assertThatThrownBy(() -> c.take(ResourceType.LISTENER)).isInstanceOf(AssertionError.class)
        .hasMessageContaining("expected a LDS response");
  }

  @Test
  void expectNoResponsePassesOnSilenceAndFailsOnAResponse() throws Exception {
    RawXdsClient.Sotw c = RawXdsClient.sotwAds(channel, "n");
    c.send(ResourceType.CLUSTER, "", "");
    StreamObserver<DiscoveryResponse> out = sotw.stream();
    c.expectNoResponse(Duration.ofMillis(50));
    out.onNext(cds("1", "n1"));
    assertThatThrownBy(() -> c.expectNoResponse()).isInstanceOf(AssertionError.class)
        .hasMessageContaining("expected no response");
  }

  @Test
  void theCloseStatusIsObservedAndTakeFailsAtOnceOnAnEndedStream() throws Exception {
    RawXdsClient.Sotw c = RawXdsClient.sotwAds(channel, "n");
    c.send(ResourceType.CLUSTER, "", "");
    sotw.stream().onError(Status.INVALID_ARGUMENT.withDescription("unknown type_url")
        .asRuntimeException());
    Status s = c.awaitClose();
    assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(s.getDescription()).isEqualTo("unknown type_url");
    assertThat(c.closed()).isDone();
    long start = System.nanoTime();
    assertThatThrownBy(c::take).isInstanceOf(AssertionError.class)
        .hasMessageContaining("the stream ended");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(RawXdsClient.WAIT);
    c.close(); // on a stream already gone: no-op
  }

  @Test
  void closeHalfClosesTheStream() throws Exception {
    RawXdsClient.Sotw c = RawXdsClient.sotwAds(channel, "n");
    c.send(ResourceType.CLUSTER, "", "");
    sotw.request();
    c.close(); // the fake server answers a half-close with its own
    assertThat(c.awaitClose()).isEqualTo(Status.OK);
  }

  @Test
  void everyTypeHasItsDeltaServiceAndAllButVirtualHostsTheirSotwService() {
    for (ResourceType t : ResourceType.values()) {
      RawXdsClient.deltaPerType(channel, t, "n").close();
      if (t.availableInSotw()) {
        RawXdsClient.sotwPerType(channel, t, "n").close();
      }
    }
    assertThatThrownBy(() -> RawXdsClient.sotwPerType(channel, ResourceType.VIRTUAL_HOST, "n"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("VirtualHostDiscoveryService has no Stream method");
  }
}
