package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import org.junit.jupiter.api.Test;

class PreEncodedNamesTest {
  @Test
  void anAckBuiltFromTheSharedRequestIsSentAsTheSameMessage() throws Exception {
    BenchClient.Shared shared = new BenchClient.Shared(500);
    DiscoveryRequest ack = shared.sotwEds.toBuilder().setVersionInfo("v7").setResponseNonce("42").build();
    var marshaller = shared.sotwMethod.getRequestMarshaller();
    try (var in = marshaller.stream(ack)) {
      assertThat(in).isInstanceOf(BenchClient.KnownLengthBytes.class); // the pre-encoded path
      assertThat(DiscoveryRequest.parseFrom(in)).isEqualTo(ack);
    }
    DiscoveryRequest other = DiscoveryRequest.newBuilder().setTypeUrl(BenchClient.CDS).setVersionInfo("1").build();
    try (var in = marshaller.stream(other)) {
      assertThat(DiscoveryRequest.parseFrom(in)).isEqualTo(other);
    }
  }

  @Test
  void theSharedDeltaSubscriptionIsSentAsItsOwnBytes() throws Exception {
    BenchClient.Shared shared = new BenchClient.Shared(500);
    var marshaller = shared.deltaMethod.getRequestMarshaller();
    try (var in = marshaller.stream(shared.deltaEds)) {
      assertThat(in).isInstanceOf(BenchClient.KnownLengthBytes.class); // encoded once, up front
      assertThat(DeltaDiscoveryRequest.parseFrom(in)).isEqualTo(shared.deltaEds);
    }
    DeltaDiscoveryRequest ack = DeltaDiscoveryRequest.newBuilder().setTypeUrl(BenchClient.EDS)
        .setResponseNonce("3").build();
    try (var in = marshaller.stream(ack)) {
      assertThat(DeltaDiscoveryRequest.parseFrom(in)).isEqualTo(ack);
    }
  }
}
