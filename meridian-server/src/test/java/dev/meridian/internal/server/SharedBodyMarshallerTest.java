package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Whole-type responses many clients receive are encoded once; each client still gets its own
 * message. "Encoded once" is seen as gRPC sees it: draining a client's stream writes the body
 * from the one shared array, the same array for every client.
 */
class SharedBodyMarshallerTest {
  final SharedBodyMarshaller<DiscoveryResponse> sotw = SharedBodyMarshaller.sotw(
      AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod().getResponseMarshaller());

  static List<Any> clusters(int n, String prefix) {
    return IntStream.range(0, n)
        .mapToObj(i -> Any.pack(Cluster.newBuilder().setName(prefix + i).build())).toList();
  }

  static DiscoveryResponse response(List<Any> resources, String nonce) {
    return DiscoveryResponse.newBuilder().setVersionInfo("v-" + nonce).setTypeUrl("type.googleapis.com/envoy.config.cluster.v3.Cluster")
        .setNonce(nonce).addAllResources(resources).build();
  }

  /** What one client is sent: the bytes, and the array its shared body came from (null: none). */
  record Sent(byte[] bytes, byte[] sharedBody) {}

  /** Streams {@code message} as gRPC does: drained if it can be (as the transport drains it). */
  static <M> Sent send(io.grpc.MethodDescriptor.Marshaller<M> m, M message) throws Exception {
    try (InputStream in = m.stream(message)) {
      if (!(in instanceof SharedBodyMarshaller.Concat c)) {
        return new Sent(in.readAllBytes(), null);
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[][] last = new byte[1][];
      c.drainTo(new OutputStream() {
        @Override
        public void write(int b) {
          out.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
          last[0] = b; // the body comes last
          out.write(b, off, len);
        }
      });
      return new Sent(out.toByteArray(), last[0]);
    }
  }

  /** Sends {@code r} and checks the client parses exactly {@code r}; returns the shared body. */
  byte[] sendSotw(DiscoveryResponse r) throws Exception {
    Sent sent = send(sotw, r);
    assertThat(DiscoveryResponse.parseFrom(sent.bytes())).isEqualTo(r);
    return sent.sharedBody();
  }

  @Test
  void aWholeTypeForManyClientsIsEncodedOnceAndEachClientGetsItsOwnMessage() throws Exception {
    List<Any> shared = clusters(200, "c-");
    assertThat(sendSotw(response(shared, "n0"))).as("first sighting: plain").isNull();
    byte[] body = sendSotw(response(shared, "n1"));
    assertThat(body).isNotNull();
    for (int client = 2; client < 5; client++) {
      assertThat(sendSotw(response(shared, "n" + client))).isSameAs(body);
    }
  }

  @Test
  void equalButDistinctResourcesAndSmallResponsesTakeThePlainPath() throws Exception {
    for (int client = 0; client < 3; client++) {
      // new Any objects each time
      assertThat(sendSotw(response(clusters(200, "c-"), "n" + client))).isNull();
      assertThat(sendSotw(response(clusters(3, "s-"), "m" + client))).isNull();
    }
  }

  @Test
  void theStreamReadsTheSameBytesWhicheverWayItIsConsumed() throws Exception {
    List<Any> shared = clusters(100, "c-");
    sotw.stream(response(shared, "warm")).close();
    DiscoveryResponse r = response(shared, "n1");
    byte[] drained;
    try (InputStream in = sotw.stream(r)) {
      assertThat(in).isInstanceOf(SharedBodyMarshaller.Concat.class);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      int n = ((io.grpc.Drainable) in).drainTo(out);
      drained = out.toByteArray();
      assertThat(n).isEqualTo(drained.length);
    }
    try (InputStream in = sotw.stream(r)) {
      assertThat(in.available()).isEqualTo(drained.length);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      out.write(in.read()); // one byte, then odd-sized chunks across the head/body boundary
      byte[] chunk = new byte[37];
      int k;
      while ((k = in.read(chunk, 0, chunk.length)) > 0) {
        out.write(chunk, 0, k);
      }
      assertThat(out.toByteArray()).isEqualTo(drained);
      assertThat(in.read()).isEqualTo(-1);
    }
    assertThat(DiscoveryResponse.parseFrom(drained)).isEqualTo(r);
  }

  @Test
  void deltaResponsesShareTheirResourcesToo() throws Exception {
    SharedBodyMarshaller<DeltaDiscoveryResponse> delta = SharedBodyMarshaller.delta(
        AggregatedDiscoveryServiceGrpc.getDeltaAggregatedResourcesMethod().getResponseMarshaller());
    List<Resource> shared = clusters(100, "c-").stream()
        .map(a -> Resource.newBuilder().setName("x").setVersion("1").setResource(a).build()).toList();
    List<byte[]> bodies = new java.util.ArrayList<>();
    for (int client = 0; client < 3; client++) {
      DeltaDiscoveryResponse r = DeltaDiscoveryResponse.newBuilder().setSystemVersionInfo("s")
          .setTypeUrl("t").setNonce("n" + client).addAllResources(shared)
          .addRemovedResources("gone").build();
      Sent sent = send(delta, r);
      assertThat(DeltaDiscoveryResponse.parseFrom(sent.bytes())).isEqualTo(r);
      bodies.add(sent.sharedBody());
    }
    assertThat(bodies.get(0)).isNull();
    assertThat(bodies.get(1)).isNotNull();
    assertThat(bodies.get(2)).isSameAs(bodies.get(1));
  }

  @Test
  void theCacheIsBounded() throws Exception {
    List<List<Any>> sets = new java.util.ArrayList<>();
    List<byte[]> bodies = new java.util.ArrayList<>();
    for (int set = 0; set < 30; set++) {
      List<Any> shared = clusters(100, "set" + set + "-");
      sets.add(shared);
      assertThat(sendSotw(response(shared, "n0"))).isNull();
      byte[] body = sendSotw(response(shared, "n1"));
      assertThat(body).isNotNull();
      assertThat(bodies).noneMatch(b -> b == body); // each list encoded once, on its own
      bodies.add(body);
    }
    // The 8 lists seen last are still held: a third client gets the same encoding.
    for (int set = 22; set < 30; set++) {
      assertThat(sendSotw(response(sets.get(set), "n2"))).as("set " + set).isSameAs(bodies.get(set));
    }
    // The one before them was let go: seen again, it is a first sighting (plain), then encoded
    // anew, into another array.
    assertThat(sendSotw(response(sets.get(21), "n2"))).isNull();
    assertThat(sendSotw(response(sets.get(21), "n3"))).isNotNull().isNotSameAs(bodies.get(21));
  }
}
