package dev.meridian.internal.server;

import static dev.meridian.internal.server.OpsFixture.await;
import static dev.meridian.xds.ResourceType.CLUSTER;
import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25, "Bounds": each bound stops the client that crosses it, over real loopback sockets,
 * while the other clients notice nothing (they keep their streams and get the next push).
 */
class BoundsTest {
  @TempDir Path dir;
  OpsFixture f;
  final List<ManagedChannel> channels = new ArrayList<>();
  final List<Socket> sockets = new ArrayList<>();

  OpsFixture start(UnaryOperator<Bounds> bounds) throws Exception {
    f = new OpsFixture(dir, o -> o.withBounds(bounds.apply(Bounds.DEFAULT)).withRestPort(0));
    return f;
  }

  /** A channel of its own: a connection of its own. */
  ManagedChannel connection() {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", f.server.xdsPort())
        .usePlaintext().build();
    channels.add(ch);
    return ch;
  }

  /** A connection of its own from {@code localAddress}: all of 127/8 is loopback on Linux. */
  ManagedChannel connectionFrom(String localAddress) {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", f.server.xdsPort())
        .localSocketPicker(new NettyChannelBuilder.LocalSocketPicker() {
          @Override
          public SocketAddress createSocketAddress(SocketAddress remote, Attributes attrs) {
            return new InetSocketAddress(localAddress, 0);
          }
        })
        .usePlaintext().build();
    channels.add(ch);
    return ch;
  }

  /** A raw HTTP/2 connection from {@code localAddress}, preface and SETTINGS sent. */
  RawHttp2 http2From(String localAddress) throws IOException {
    RawHttp2 h = new RawHttp2(localAddress, f.server.xdsPort());
    sockets.add(h.socket);
    return h;
  }

  @AfterEach
  void stop() throws Exception {
    for (Socket s : sockets) {
      s.close();
    }
    for (ManagedChannel ch : channels) {
      ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (f != null) {
      f.close();
    }
  }

  /** A client that subscribed to CDS and ACKed: it must get the next push and stay open. */
  static RawXdsClient.Sotw subscribed(ManagedChannel ch, String node) throws Exception {
    RawXdsClient.Sotw c = RawXdsClient.sotwAds(ch, node);
    c.ack(c.subscribe(CLUSTER));
    return c;
  }

  /** {@code meridian_bounds_refused_total} for {@code bound}; 0 when not yet exported. */
  double refusedCount(String bound) {
    for (String line : f.server.hub().metrics().render().split("\n")) {
      if (line.startsWith("meridian_bounds_refused_total{bound=\"" + bound + "\"}")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  /** The others noticed nothing: each is open and gets the push of a reload. */
  void othersGetTheNextPush(RawXdsClient.Sotw... others) throws Exception {
    f.reload(OpsFixture.config("7s"));
    for (RawXdsClient.Sotw c : others) {
      assertThat(connectTimeoutOfV1(c.take(CLUSTER))).isEqualTo(7);
      assertThat(c.closed()).isNotDone();
    }
  }

  static long connectTimeoutOfV1(DiscoveryResponse r) throws Exception {
    for (var any : r.getResourcesList()) {
      Cluster c = any.unpack(Cluster.class);
      if (c.getName().equals("greeter-v1")) {
        return c.getConnectTimeout().getSeconds();
      }
    }
    throw new AssertionError("no greeter-v1 in " + r);
  }

  @Test
  void streamBeyondMaxStreamsIsRefusedWithResourceExhausted() throws Exception {
    start(b -> b.withMaxStreams(3));
    ManagedChannel ch = connection();
    RawXdsClient.Sotw a = subscribed(ch, "a");
    RawXdsClient.Sotw b = subscribed(connection(), "b");
    RawXdsClient.Sotw c = subscribed(ch, "c");
    RawXdsClient.Sotw fourth = RawXdsClient.sotwAds(ch, "d");
    fourth.send(CLUSTER, "", "");
    Status refused = fourth.awaitClose();
    assertThat(refused.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(refused.getDescription()).contains("maximum of 3 streams");
    assertThat(refusedCount("max_streams")).isEqualTo(1.0);
    othersGetTheNextPush(a, b, c);
    // The count follows streams that end: a freed place takes a new stream.
    a.close();
    await("a's stream ended", () -> a.closed().isDone());
    RawXdsClient.Sotw again = RawXdsClient.sotwAds(connection(), "e");
    assertThat(again.subscribe(CLUSTER).getResourcesCount()).isEqualTo(2);
  }

  @Test
  void streamBeyondMaxStreamsPerConnectionWaitsForAPlaceWhileOtherConnectionsAreServed()
      throws Exception {
    start(b -> b.withMaxStreamsPerConnection(2));
    ManagedChannel crowded = connection();
    RawXdsClient.Sotw a = subscribed(crowded, "a");
    RawXdsClient.Sotw b = subscribed(crowded, "b");
    RawXdsClient.Sotw third = RawXdsClient.sotwAds(crowded, "third");
    third.send(CLUSTER, "", "");
    // Opened after the third, on another connection, and answered: the third one waits.
    RawXdsClient.Sotw elsewhere = subscribed(connection(), "elsewhere");
    third.expectNoResponse();
    assertThat(third.closed()).isNotDone();
    a.close();
    assertThat(third.take(CLUSTER).getResourcesCount()).isEqualTo(2);
    othersGetTheNextPush(b, elsewhere);
  }

  @Test
  void streamOverItsRequestRateIsClosedWithResourceExhausted() throws Exception {
    start(b -> b.withMaxRequestRate(5)); // a burst of 50
    ManagedChannel ch = connection();
    RawXdsClient.Sotw sameConnection = subscribed(ch, "quiet-1");
    RawXdsClient.Sotw otherConnection = subscribed(connection(), "quiet-2");
    RawXdsClient.Sotw spammer = RawXdsClient.sotwAds(ch, "spammer");
    DiscoveryResponse cds = spammer.subscribe(CLUSTER);
    for (int i = 0; i < 200 && !spammer.closed().isDone(); i++) {
      spammer.ack(cds); // an ACK the server did not ask for: nothing is sent back
    }
    Status closed = spammer.awaitClose();
    assertThat(closed.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(closed.getDescription()).contains("more than 5 requests a second");
    assertThat(refusedCount("max_request_rate")).isEqualTo(1.0);
    othersGetTheNextPush(sameConnection, otherConnection);
  }

  @Test
  void acksOfPushesNeverCountAgainstTheRequestRate() throws Exception {
    start(b -> b.withMaxRequestRate(1)); // a burst of 10
    RawXdsClient.Sotw c = subscribed(connection(), "busy");
    // Thirty pushes in quick succession, each ACKed: three times the burst, all the server's doing.
    for (int i = 0; i < 30; i++) {
      f.reload(OpsFixture.config((10 + i) + "s"));
      DiscoveryResponse pushed = c.take(CLUSTER);
      assertThat(connectTimeoutOfV1(pushed)).isEqualTo(10 + i);
      c.ack(pushed);
    }
    assertThat(c.closed()).isNotDone();
  }

  @Test
  void requestLargerThanMaxRequestBytesFailsOnlyItsStream() throws Exception {
    start(b -> b.withMaxRequestBytes(64 * 1024));
    ManagedChannel ch = connection();
    RawXdsClient.Sotw sameConnection = subscribed(ch, "small");
    RawXdsClient.Sotw big = RawXdsClient.sotwAds(ch, "big");
    DiscoveryRequest.Builder request = DiscoveryRequest.newBuilder().setTypeUrl(CLUSTER.typeUrl());
    for (int i = 0; i < 2000; i++) {
      request.addResourceNames("cluster-with-a-rather-long-name-" + i);
    }
    assertThat(request.build().getSerializedSize()).isGreaterThan(64 * 1024);
    big.send(request);
    assertThat(big.awaitClose().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    othersGetTheNextPush(sameConnection);
    // REST-JSON: the same bound on the body, refused from its Content-Length.
    HttpResponse<String> r = f.http.send(HttpRequest.newBuilder(URI.create(
            "http://127.0.0.1:" + f.server.restPort() + "/v3/discovery:clusters"))
        .POST(HttpRequest.BodyPublishers.ofString("{\"node\": {\"id\": \"big\"}, \"version_info\": \""
            + "x".repeat(70 * 1024) + "\"}")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(413);
  }

  /**
   * One request naming more resources than {@code --max-resource-names} ends its stream before
   * its names are decoded (the marshaller counts them), with RESOURCE_EXHAUSTED and one line, not
   * UNKNOWN and a stack trace; REST-JSON answers 413. Once a 12 MiB request naming 1.3 million
   * clusters cost the server 12 s, 570 MiB of heap and a 75 MB answer.
   */
  @Test
  void requestNamingMoreThanMaxResourceNamesFailsOnlyItsStream() throws Exception {
    start(b -> b.withMaxResourceNames(1000));
    ManagedChannel ch = connection();
    RawXdsClient.Sotw sameConnection = subscribed(ch, "small");
    RawXdsClient.Sotw big = RawXdsClient.sotwAds(ch, "big");
    DiscoveryRequest.Builder request = DiscoveryRequest.newBuilder()
        .setNode(io.envoyproxy.envoy.config.core.v3.Node.newBuilder().setId("big"))
        .setTypeUrl(CLUSTER.typeUrl());
    for (int i = 0; i < 1001; i++) {
      request.addResourceNames("c" + i);
    }
    big.send(request);
    Status closed = big.awaitClose();
    assertThat(closed.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(closed.getDescription()).contains("at most 1000", "--max-resource-names");
    assertThat(refusedCount("max_resource_names")).isEqualTo(1.0);
    othersGetTheNextPush(sameConnection);
    // Delta, in steps: each request within the bound, the stream past it.
    RawXdsClient.Delta delta = RawXdsClient.deltaAds(connection(), "stepper");
    io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest.Builder step =
        io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest.newBuilder();
    for (int i = 0; i < 600; i++) {
      step.addResourceNamesSubscribe("first-" + i);
    }
    delta.send(dev.meridian.xds.ResourceType.ENDPOINT, step);
    delta.take(dev.meridian.xds.ResourceType.ENDPOINT);
    step.clearResourceNamesSubscribe();
    for (int i = 0; i < 600; i++) {
      step.addResourceNamesSubscribe("second-" + i);
    }
    delta.send(dev.meridian.xds.ResourceType.ENDPOINT, step);
    Status stepped = delta.awaitClose();
    assertThat(stepped.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(stepped.getDescription()).contains("this stream names 1200 resources");
    // REST-JSON: 413, and the 1,001 unknown names are not answered one error each.
    StringBuilder names = new StringBuilder();
    for (int i = 0; i < 1001; i++) {
      names.append(i == 0 ? "" : ", ").append("\"c").append(i).append('"');
    }
    HttpResponse<String> r = f.http.send(post("http://127.0.0.1:" + f.server.restPort()
        + "/v3/discovery:clusters", ", \"resource_names\": [" + names + "]"),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(413);
    assertThat(r.body()).contains("at most 1000");
  }

  /**
   * The bytes of requests the server holds at once, read and not yet handled, are bounded over
   * every stream and poll ({@code --max-request-memory}): each client within its own bounds,
   * many together could still fill the heap. Here the test itself holds most of the bound, as
   * requests in flight would: a large request is refused and retried, a small one still fits.
   */
  @Test
  void requestsBeyondTheServersRequestMemoryAreRefusedUntilItIsFree() throws Exception {
    start(b -> b.withMaxRequestBytes(256 * 1024).withMaxRequestMemory(1024 * 1024));
    ManagedChannel ch = connection();
    RawXdsClient.Sotw sameConnection = subscribed(ch, "small");
    RequestMemory memory = f.server.requestMemory();
    await("handled requests are released", () -> memory.held() == 0);
    assertThat(memory.reserve(900 * 1024)).isTrue(); // requests in flight elsewhere
    try {
      RawXdsClient.Sotw big = RawXdsClient.sotwAds(ch, "big");
      big.send(DiscoveryRequest.newBuilder().setTypeUrl(CLUSTER.typeUrl())
          .addAllResourceNames(longNames(4000)));
      Status closed = big.awaitClose();
      assertThat(closed.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertThat(closed.getDescription()).contains("--max-request-memory", "retry");
      assertThat(refusedCount("max_request_memory")).isEqualTo(1.0);
      HttpResponse<String> r = f.http.send(post("http://127.0.0.1:" + f.server.restPort()
          + "/v3/discovery:clusters", ", \"version_info\": \"" + "v".repeat(200 * 1024) + "\""),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(503);
      assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
      assertThat(refusedCount("max_request_memory")).isEqualTo(2.0);
      othersGetTheNextPush(sameConnection); // small requests (its ACKs) still fit
    } finally {
      memory.release(900 * 1024);
    }
    // Free again: the same large request is served.
    RawXdsClient.Sotw retried = RawXdsClient.sotwAds(connection(), "big");
    retried.send(DiscoveryRequest.newBuilder().setTypeUrl(CLUSTER.typeUrl())
        .addAllResourceNames(longNames(4000)));
    assertThat(retried.take(CLUSTER).getTypeUrl()).isEqualTo(CLUSTER.typeUrl());
    await("every request handled is released", () -> memory.held() == 0);
  }

  /** {@code n} names of about 50 bytes each. */
  static List<String> longNames(int n) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      names.add("a-cluster-with-a-name-of-about-fifty-bytes-" + i);
    }
    return names;
  }

  /** A request that is not protobuf ends its stream INTERNAL, as docs/reliability.md says. */
  @Test
  void requestThatIsNotProtobufFailsItsStreamInternal() throws Exception {
    start(b -> b);
    ManagedChannel ch = connection();
    RawXdsClient.Sotw sameConnection = subscribed(ch, "fine");
    ClientCall<byte[], byte[]> call = ch.newCall(io.grpc.MethodDescriptor.<byte[], byte[]>newBuilder()
        .setType(io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
        .setFullMethodName(AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod()
            .getFullMethodName())
        .setRequestMarshaller(RAW).setResponseMarshaller(RAW).build(), CallOptions.DEFAULT);
    CompletableFuture<Status> closed = new CompletableFuture<>();
    call.start(new ClientCall.Listener<>() {
      @Override
      public void onClose(Status status, Metadata trailers) {
        closed.complete(status);
      }
    }, new Metadata());
    call.request(1);
    call.sendMessage(new byte[] {0x0A, 0x7F, 0x01}); // field 1 claims 127 bytes; 1 follows
    call.halfClose();
    Status s = closed.get(10, TimeUnit.SECONDS);
    assertThat(s.getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(s.getDescription()).contains("not a valid DiscoveryRequest");
    othersGetTheNextPush(sameConnection);
  }

  static final io.grpc.MethodDescriptor.Marshaller<byte[]> RAW =
      new io.grpc.MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new java.io.ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        }
      };

  @Test
  void rapidResetClosesTheResettingConnectionOnly() throws Exception {
    start(b -> b.withMaxStreamResets(20));
    ManagedChannel resetting = connection();
    RawXdsClient.Sotw victim = subscribed(resetting, "on-the-resetting-connection");
    RawXdsClient.Sotw other = subscribed(connection(), "other");
    for (int i = 0; i < 200 && !victim.closed().isDone(); i++) {
      ClientCall<DiscoveryRequest, DiscoveryResponse> call = resetting.newCall(
          AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod(), CallOptions.DEFAULT);
      call.start(new ClientCall.Listener<>() {}, new Metadata());
      call.sendMessage(DiscoveryRequest.newBuilder().setTypeUrl(CLUSTER.typeUrl()).build());
      call.cancel("reset", null); // HEADERS, DATA, RST_STREAM: the rapid reset pattern
    }
    // The connection got a GOAWAY (ENHANCE_YOUR_CALM): its streams end, the client reconnects.
    Status cut = victim.awaitClose();
    assertThat(cut.isOk()).isFalse();
    othersGetTheNextPush(other);
  }

  @Test
  void socketThatNeverSendsTheHttp2PrefaceIsClosedAfterTheHandshakeTimeout() throws Exception {
    start(b -> b.withHandshakeTimeout(Duration.ofMillis(500)));
    RawXdsClient.Sotw other = subscribed(connection(), "other");
    Socket idle = socket(f.server.xdsPort()); // plaintext, and not a byte sent
    // grpc-java's own default was 120 s: the socket would still be open long after 5 s.
    assertXdsClosedWithin(idle, Duration.ofSeconds(5));
    await("its connection no longer counted", () -> f.server.connectionsOpen() == 1);
    othersGetTheNextPush(other);
  }

  @Test
  void connectionBeyondMaxConnectionsIsClosedAtOnceWhileReadyzAnswers() throws Exception {
    start(b -> b.withMaxConnections(4, 4));
    RawXdsClient.Sotw other = subscribed(connection(), "other");
    List<Socket> idle = List.of(socket(f.server.xdsPort()), socket(f.server.xdsPort()),
        socket(f.server.xdsPort()));
    await("four connections counted", () -> f.server.connectionsOpen() == 4);
    Socket fifth = socket(f.server.xdsPort());
    assertXdsClosedWithin(fifth, Duration.ofSeconds(5)); // at once, not after the handshake timeout
    assertThat(refusedCount("max_connections")).isEqualTo(1.0);
    assertThat(f.get("/readyz").statusCode()).isEqualTo(200);
    for (Socket s : idle) {
      assertThat(xdsClosedWithin(s, Duration.ofMillis(50))).as("held within the bound").isFalse();
    }
    othersGetTheNextPush(other);
    // A place freed takes a new connection.
    idle.get(0).close();
    await("three connections counted", () -> f.server.connectionsOpen() == 3);
    assertThat(subscribed(connection(), "later").closed()).isNotDone();
  }

  @Test
  void connectionsOfOneAddressBeyondItsQuotaAreClosedWhileOtherAddressesConnect()
      throws Exception {
    start(b -> b.withMaxConnections(100, 2));
    Socket first = socketFrom("127.0.0.2");
    Socket second = socketFrom("127.0.0.2");
    await("two connections counted", () -> f.server.connectionsOpen() == 2);
    Socket third = socketFrom("127.0.0.2");
    assertXdsClosedWithin(third, Duration.ofSeconds(5));
    assertThat(refusedCount("max_connections_per_peer")).isEqualTo(1.0);
    RawXdsClient.Sotw elsewhere = subscribed(connectionFrom("127.0.0.3"), "elsewhere");
    assertThat(xdsClosedWithin(first, Duration.ofMillis(50))).isFalse();
    assertThat(xdsClosedWithin(second, Duration.ofMillis(50))).isFalse();
    othersGetTheNextPush(elsewhere);
  }

  @Test
  void onePeerCannotTakeEveryStreamFromAPeerThatConnectsLater() throws Exception {
    start(b -> b.withMaxStreams(30).withMaxStreamsPerPeer(3));
    ManagedChannel greedy = connectionFrom("127.0.0.2");
    RawXdsClient.Sotw a = subscribed(greedy, "greedy-1");
    RawXdsClient.Sotw b = subscribed(greedy, "greedy-2");
    RawXdsClient.Sotw c = subscribed(connectionFrom("127.0.0.2"), "greedy-3");
    // The quota is the address's, whatever its connections.
    for (ManagedChannel ch : List.of(greedy, connectionFrom("127.0.0.2"))) {
      RawXdsClient.Sotw more = RawXdsClient.sotwAds(ch, "greedy-more");
      more.send(CLUSTER, "", "");
      Status refused = more.awaitClose();
      assertThat(refused.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
      assertThat(refused.getDescription()).contains("address 127.0.0.2")
          .contains("maximum of 3 streams");
    }
    assertThat(refusedCount("max_streams_per_peer")).isEqualTo(2.0);
    RawXdsClient.Sotw later = subscribed(connectionFrom("127.0.0.3"), "later");
    othersGetTheNextPush(a, b, c, later);
    // A stream ended gives its place back to its peer.
    a.close();
    await("greedy holds two", () -> f.server.streamsOfPeer("address 127.0.0.2") == 2);
    assertThat(subscribed(greedy, "greedy-again").closed()).isNotDone();
  }

  @Test
  void streamsPerPeerDefaultToHalfOfMaxStreamsAndAtLeastAnEnvoysTen() {
    assertThat(Bounds.DEFAULT.withMaxStreams(300).streamsPerPeerLimit()).isEqualTo(150);
    assertThat(Bounds.DEFAULT.streamsPerPeerLimit()).isEqualTo(50_000);
    assertThat(Bounds.DEFAULT.withMaxStreams(15).streamsPerPeerLimit()).isEqualTo(10);
    assertThat(Bounds.DEFAULT.withMaxStreams(5).streamsPerPeerLimit()).isEqualTo(5);
  }

  @Test
  void connectionsDefaultToTheFileDescriptorLimitLessAReserve() {
    assertThat(Bounds.connectionsFor(1_048_576)).isEqualTo(1_048_576 - 104_857);
    assertThat(Bounds.connectionsFor(1024)).isEqualTo(1024 - 256);
    assertThat(Bounds.connectionsFor(-1)).isEqualTo(Bounds.CONNECTIONS_WITHOUT_FD_LIMIT);
    long limit = Bounds.fileDescriptorLimit();
    assertThat(Bounds.DEFAULT.connectionLimit()).isEqualTo(Bounds.connectionsFor(limit));
  }

  @Test
  void halfSentMessageIsCutAfterTheReceiveDeadlineAndItsBytesReleased() throws Exception {
    start(b -> b.withPartialMessages(Duration.ofMillis(500), 0, 0));
    RawXdsClient.Sotw other = subscribed(connection(), "other");
    RawHttp2 slow = http2From("127.0.0.1");
    // 16 MiB declared (the largest accepted), 60,000 bytes sent (within HTTP/2's first 64 KiB
    // window), the rest never.
    slow.sendPartOfAMessage(1, Bounds.DEFAULT_MAX_REQUEST_BYTES, 60_000);
    await("the part held", () -> f.server.partialMessageBytes() == 60_000);
    assertThat(f.server.streamsOfPeer("address 127.0.0.1")).isEqualTo(2);
    assertXdsClosedWithin(slow.socket, Duration.ofSeconds(5));
    // Its stream ended: grpc-java closed its deframer, which frees the bytes it held.
    await("its stream ended", () -> f.server.streamsOfPeer("address 127.0.0.1") == 1);
    assertThat(f.server.partialMessageBytes()).isZero();
    assertThat(refusedCount("message_receive_timeout")).isEqualTo(1.0);
    othersGetTheNextPush(other);
  }

  @Test
  void partialBytesBeyondTheConnectionsBoundFailTheStreamThatCrossesIt() throws Exception {
    start(b -> b.withPartialMessages(Duration.ofSeconds(60), 0, 50_000));
    RawXdsClient.Sotw other = subscribed(connection(), "other");
    RawHttp2 h = http2From("127.0.0.1");
    h.sendPartOfAMessage(1, 1 << 20, 30_000);
    await("the first part held", () -> f.server.partialMessageBytes() == 30_000);
    h.sendPartOfAMessage(3, 1 << 20, 30_000); // 60,000 on the connection: over
    h.awaitEndOf(3);
    await("its stream ended", () -> f.server.streamsOfPeer("address 127.0.0.1") == 2);
    assertThat(refusedCount("max_partial_bytes_per_connection")).isEqualTo(1.0);
    await("only the first part held", () -> f.server.partialMessageBytes() == 30_000);
    assertThat(xdsClosedWithin(h.socket, Duration.ofMillis(50))).isFalse();
    othersGetTheNextPush(other);
  }

  @Test
  void partialBytesBeyondTheServersBoundFailTheStreamThatCrossesIt() throws Exception {
    start(b -> b.withPartialMessages(Duration.ofSeconds(60), 50_000, 0));
    RawXdsClient.Sotw other = subscribed(connection(), "other");
    RawHttp2 first = http2From("127.0.0.2");
    first.sendPartOfAMessage(1, 1 << 20, 30_000);
    await("the first part held", () -> f.server.partialMessageBytes() == 30_000);
    RawHttp2 second = http2From("127.0.0.3");
    second.sendPartOfAMessage(1, 1 << 20, 30_000);
    second.awaitEndOf(1);
    await("its stream ended", () -> f.server.streamsOfPeer("address 127.0.0.3") == 0);
    assertThat(f.server.streamsOfPeer("address 127.0.0.2")).isEqualTo(1);
    assertThat(refusedCount("max_partial_bytes")).isEqualTo(1.0);
    await("only the first part held", () -> f.server.partialMessageBytes() == 30_000);
    othersGetTheNextPush(other);
  }

  /** HTTP/2 by hand: the client preface and SETTINGS, then PING after PING. */
  @Test
  void pingFloodGetsGoAwayEnhanceYourCalm() throws Exception {
    start(b -> b);
    RawXdsClient.Sotw other = subscribed(connection(), "other");
    Socket s = socket(f.server.xdsPort());
    // All in one write: the server answers the flood with GOAWAY and closes, and a write after
    // that close fails (broken pipe) before the GOAWAY can be read.
    ByteArrayOutputStream flood = new ByteArrayOutputStream();
    flood.writeBytes("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    flood.writeBytes(frame(4, 0, new byte[0])); // SETTINGS
    for (int i = 0; i < 10; i++) {
      flood.writeBytes(frame(6, 0, new byte[8])); // PING; 5 s apart is the most accepted
    }
    OutputStream out = s.getOutputStream();
    out.write(flood.toByteArray());
    out.flush();
    // Read frames until the GOAWAY; its error code is bytes 4..7 of the payload.
    DataInputStream in = new DataInputStream(s.getInputStream());
    int goAwayError = -1;
    while (goAwayError < 0) {
      int length = (in.readUnsignedByte() << 16) | in.readUnsignedShort();
      int type = in.readUnsignedByte();
      in.readUnsignedByte(); // flags
      in.readInt(); // stream id
      byte[] payload = in.readNBytes(length);
      if (type == 7) {
        goAwayError = ((payload[4] & 0xff) << 24) | ((payload[5] & 0xff) << 16)
            | ((payload[6] & 0xff) << 8) | (payload[7] & 0xff);
      }
    }
    assertThat(goAwayError).isEqualTo(0xb); // ENHANCE_YOUR_CALM
    othersGetTheNextPush(other);
  }

  private static byte[] frame(int type, int flags, byte[] payload) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    b.write(payload.length >>> 16);
    b.write(payload.length >>> 8);
    b.write(payload.length);
    b.write(type);
    b.write(flags);
    b.writeBytes(new byte[4]); // stream 0
    b.writeBytes(payload);
    return b.toByteArray();
  }

  @Test
  void slowlorisDoesNotStarveReadyz() throws Exception {
    start(b -> b);
    // More slow clients than the two threads the admin port had: each holds one thread.
    for (int i = 0; i < 20; i++) {
      slowClient(f.server.httpPort());
    }
    for (int i = 0; i < 5; i++) {
      HttpResponse<String> r = f.http.send(HttpRequest.newBuilder(URI.create(
              "http://127.0.0.1:" + f.server.httpPort() + "/readyz"))
          .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
    }
  }

  @Test
  void requestNotSentWithinHttpRequestTimeoutIsCut() throws Exception {
    start(b -> b.withHttp(2, 8, Duration.ofMillis(500)));
    // As many slow clients as threads: /readyz waits for the watchdog to free one.
    Socket first = slowClient(f.server.httpPort());
    Socket second = slowClient(f.server.httpPort());
    HttpResponse<String> r = f.get("/readyz");
    assertThat(r.statusCode()).isEqualTo(200);
    assertClosedWithin(first, Duration.ofSeconds(5));
    assertClosedWithin(second, Duration.ofSeconds(5));
    await("both cuts counted", () -> refusedCount("http_request_timeout") == 2);
  }

  @Test
  void connectionBeyondHttpThreadsAndQueueIsClosed() throws Exception {
    start(b -> b.withHttp(1, 1, Duration.ofSeconds(30)));
    List<Socket> slow = List.of(slowClient(f.server.httpPort()), slowClient(f.server.httpPort()),
        slowClient(f.server.httpPort()));
    // One thread, one place in the queue: one of three is closed at once, not after 30 s.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    int closed = 0;
    while (closed == 0) {
      assertThat(System.nanoTime()).as("a connection closed within 10 s").isLessThan(deadline);
      for (Socket s : slow) {
        if (closedWithin(s, Duration.ofMillis(50))) {
          closed++;
        }
      }
    }
    assertThat(closed).isEqualTo(1);
    assertThat(refusedCount("http_queue")).isEqualTo(1.0);
  }

  @Test
  void restLongPollBeyondMaxRestLongPollsIs503WithRetryAfter() throws Exception {
    start(b -> b.withMaxRestLongPolls(2));
    String url = "http://127.0.0.1:" + f.server.restPort() + "/v3/discovery:clusters";
    HttpResponse<String> first = f.http.send(post(url, ""), HttpResponse.BodyHandlers.ofString());
    assertThat(first.statusCode()).isEqualTo(200);
    String version = RestAndFilesTest.parse(first.body()).getVersionInfo();
    HttpRequest poll = HttpRequest.newBuilder(URI.create(url)).header("Prefer", "wait=30")
        .POST(HttpRequest.BodyPublishers.ofString("{\"node\": {\"id\": \"poller\"}, "
            + "\"version_info\": \"" + version + "\"}")).build();
    CompletableFuture<HttpResponse<String>> a = f.http.sendAsync(poll,
        HttpResponse.BodyHandlers.ofString());
    CompletableFuture<HttpResponse<String>> b = f.http.sendAsync(poll,
        HttpResponse.BodyHandlers.ofString());
    await("two polls held", () -> f.server.restLongPolls() == 2);
    HttpResponse<String> third = f.http.send(poll, HttpResponse.BodyHandlers.ofString());
    assertThat(third.statusCode()).isEqualTo(503);
    assertThat(third.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(refusedCount("max_rest_long_polls")).isEqualTo(1.0);
    // The held ones notice nothing: the next change answers them.
    f.reload(OpsFixture.config("7s"));
    assertThat(a.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    assertThat(b.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    await("no poll held", () -> f.server.restLongPolls() == 0);
  }

  private static HttpRequest post(String url, String extra) {
    return HttpRequest.newBuilder(URI.create(url)).POST(HttpRequest.BodyPublishers.ofString(
        "{\"node\": {\"id\": \"poller\"}" + extra + "}")).build();
  }

  /** A client that starts a request and never finishes its headers. */
  Socket slowClient(int port) throws IOException {
    Socket s = socket(port);
    s.getOutputStream().write("GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a"
        .getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
    return s;
  }

  /** A plain socket to the xDS port from {@code localAddress}. */
  Socket socketFrom(String localAddress) throws IOException {
    Socket s = new Socket();
    sockets.add(s);
    s.bind(new InetSocketAddress(localAddress, 0));
    s.connect(new InetSocketAddress("127.0.0.1", f.server.xdsPort()), 5000);
    return s;
  }

  Socket socket(int port) throws IOException {
    Socket s = new Socket("127.0.0.1", port);
    sockets.add(s);
    return s;
  }

  static void assertClosedWithin(Socket s, Duration bound) throws IOException {
    assertThat(closedWithin(s, bound)).as("closed within " + bound).isTrue();
  }

  /**
   * Whether the xDS server closed {@code s} (EOF or reset) within {@code bound}; what it sent
   * before (its SETTINGS, a GOAWAY) is read and dropped.
   */
  static boolean xdsClosedWithin(Socket s, Duration bound) throws IOException {
    long deadline = System.nanoTime() + bound.toNanos();
    InputStream in = s.getInputStream();
    byte[] buf = new byte[8192];
    while (true) {
      long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (left <= 0) {
        return false;
      }
      s.setSoTimeout((int) left);
      try {
        if (in.read(buf) < 0) {
          return true;
        }
      } catch (SocketTimeoutException e) {
        return false;
      } catch (IOException e) {
        return true; // reset
      }
    }
  }

  static void assertXdsClosedWithin(Socket s, Duration bound) throws IOException {
    assertThat(xdsClosedWithin(s, bound)).as("closed within " + bound).isTrue();
  }

  /** Whether the server closed {@code s} (EOF or reset) within {@code bound}. */
  static boolean closedWithin(Socket s, Duration bound) throws IOException {
    s.setSoTimeout((int) bound.toMillis());
    InputStream in = s.getInputStream();
    try {
      return in.read() < 0; // nothing is ever answered to an unfinished request
    } catch (SocketTimeoutException e) {
      return false;
    } catch (EOFException e) {
      return true;
    } catch (IOException e) {
      return true; // reset
    }
  }
}
