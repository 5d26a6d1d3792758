package dev.meridian.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Whole-type responses many clients receive are encoded once; each client still gets its own message. */
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

  static <M> M roundTrip(io.grpc.MethodDescriptor.Marshaller<M> m, M message) throws Exception {
    try (InputStream in = m.stream(message)) {
      return m.parse(in);
    }
  }

  @Test
  void aWholeTypeForManyClientsIsEncodedOnceAndEachClientGetsItsOwnMessage() throws Exception {
    List<Any> shared = clusters(200, "c-");
    for (int client = 0; client < 5; client++) {
      DiscoveryResponse r = response(shared, "n" + client);
      assertThat(roundTrip(sotw, r)).isEqualTo(r);
    }
    assertThat(sotw.encodings()).isEqualTo(1);
  }

  @Test
  void equalButDistinctResourcesAndSmallResponsesTakeThePlainPath() throws Exception {
    for (int client = 0; client < 3; client++) {
      DiscoveryResponse r = response(clusters(200, "c-"), "n" + client); // new Any objects each time
      assertThat(roundTrip(sotw, r)).isEqualTo(r);
      DiscoveryResponse small = response(clusters(3, "s-"), "m" + client);
      assertThat(roundTrip(sotw, small)).isEqualTo(small);
    }
    assertThat(sotw.encodings()).isZero();
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
    for (int client = 0; client < 3; client++) {
      DeltaDiscoveryResponse r = DeltaDiscoveryResponse.newBuilder().setSystemVersionInfo("s")
          .setTypeUrl("t").setNonce("n" + client).addAllResources(shared)
          .addRemovedResources("gone").build();
      assertThat(roundTrip(delta, r)).isEqualTo(r);
    }
    assertThat(delta.encodings()).isEqualTo(1);
  }

  @Test
  void theCacheIsBounded() throws Exception {
    for (int set = 0; set < 30; set++) {
      List<Any> shared = clusters(100, "set" + set + "-");
      for (int client = 0; client < 2; client++) {
        DiscoveryResponse r = response(shared, "n" + client);
        assertThat(roundTrip(sotw, r)).isEqualTo(r);
      }
    }
    assertThat(sotw.encodings()).isEqualTo(30);
    assertThat(sotw.cachedLists()).isLessThanOrEqualTo(8);
    // An early list was evicted: seen again, it is a first sighting (plain), then encoded anew.
    List<Any> first = clusters(100, "again-");
    roundTrip(sotw, response(first, "a"));
    roundTrip(sotw, response(first, "b"));
    assertThat(sotw.encodings()).isEqualTo(31);
  }
}
