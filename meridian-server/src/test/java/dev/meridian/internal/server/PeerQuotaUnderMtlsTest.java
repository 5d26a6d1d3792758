package dev.meridian.internal.server;

import static dev.meridian.internal.server.OpsFixture.await;
import static dev.meridian.xds.ResourceType.CLUSTER;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.testing.RawXdsClient;
import dev.meridian.testing.TestCerts;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Under mTLS a peer is its verified identity, not its address: every client here connects from
 * 127.0.0.1, as workloads behind one NAT address would, and each identity has its own quota.
 */
class PeerQuotaUnderMtlsTest {
  static final String ORDERS = "spiffe://example.org/ns/orders/sa/envoy";
  static final String PAYMENTS = "spiffe://example.org/ns/payments/sa/envoy";

  @TempDir Path dir;
  TestCerts.Ca ca;
  Path caFile;
  MeridianServer server;
  final List<ManagedChannel> channels = new ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    ca = TestCerts.ca("meridian-test-ca");
    caFile = ca.writeCert(dir.resolve("ca.crt"));
    TestCerts.Written serverFiles = ca.leaf("meridian").loopback().issue().write(dir, "server");
    Path config = dir.resolve("config.yaml");
    Files.writeString(config, OpsFixture.config("5s"));
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 100)
        .withTls(new MeridianServer.Options.Tls(serverFiles.cert(), serverFiles.key(), caFile))
        .withBounds(Bounds.DEFAULT.withMaxStreamsPerPeer(2).withMaxConnections(100, 2)))
        .start();
  }

  @AfterEach
  void stop() throws Exception {
    for (ManagedChannel c : channels) {
      c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    server.close();
  }

  /** A connection of its own, with a client certificate naming {@code identity}. */
  ManagedChannel connectionOf(String identity) throws Exception {
    TestCerts.Written files = ca.leaf("c" + channels.size()).uri(identity).issue()
        .write(dir, "client-" + channels.size());
    ManagedChannel c = NettyChannelBuilder.forAddress("localhost", server.xdsPort(),
        TlsChannelCredentials.newBuilder().trustManager(caFile.toFile())
            .keyManager(files.cert().toFile(), files.key().toFile()).build()).build();
    channels.add(c);
    return c;
  }

  static RawXdsClient.Sotw subscribed(ManagedChannel ch, String node) throws Exception {
    RawXdsClient.Sotw c = RawXdsClient.sotwAds(ch, node);
    c.ack(c.subscribe(CLUSTER));
    return c;
  }

  double refusedCount(String bound) {
    for (String line : server.hub().metrics().render().split("\n")) {
      if (line.startsWith("meridian_bounds_refused_total{bound=\"" + bound + "\"}")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  @Test
  void streamsAreCountedPerIdentityNotPerAddress() throws Exception {
    ManagedChannel orders = connectionOf(ORDERS);
    subscribed(orders, "orders-1");
    subscribed(orders, "orders-2");
    RawXdsClient.Sotw third = RawXdsClient.sotwAds(orders, "orders-3");
    third.send(CLUSTER, "", "");
    Status refused = third.awaitClose();
    assertThat(refused.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(refused.getDescription()).contains("identity " + ORDERS);
    // The same address, another identity: a quota of its own.
    ManagedChannel payments = connectionOf(PAYMENTS);
    RawXdsClient.Sotw p1 = subscribed(payments, "payments-1");
    RawXdsClient.Sotw p2 = subscribed(payments, "payments-2");
    assertThat(p1.closed()).isNotDone();
    assertThat(p2.closed()).isNotDone();
    assertThat(server.streamsOfPeer("identity " + PAYMENTS)).isEqualTo(2);
  }

  @Test
  void connectionsBeyondAnIdentitysQuotaAreClosedOnceItsHandshakeIsDone() throws Exception {
    RawXdsClient.Sotw first = subscribed(connectionOf(ORDERS), "orders-1");
    RawXdsClient.Sotw second = subscribed(connectionOf(ORDERS), "orders-2");
    RawXdsClient.Sotw third = RawXdsClient.sotwAds(connectionOf(ORDERS), "orders-3");
    third.send(CLUSTER, "", "");
    // Closed under the client's first writes: grpc-java says UNAVAILABLE, or at times UNKNOWN
    // "channel closed" (a write that found the channel closed).
    Status cut = third.awaitClose();
    assertThat(cut.getCode()).as(cut.toString())
        .isIn(Status.Code.UNAVAILABLE, Status.Code.UNKNOWN);
    assertThat(cut.getDescription()).as(cut.toString()).doesNotContain("maximum of");
    await("the refusal counted", () -> refusedCount("max_connections_per_peer") >= 1.0);
    // Two connections of one address so far: another identity there still connects.
    RawXdsClient.Sotw payments = subscribed(connectionOf(PAYMENTS), "payments-1");
    assertThat(first.closed()).isNotDone();
    assertThat(second.closed()).isNotDone();
    assertThat(payments.closed()).isNotDone();
  }
}
