package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Issue 25: the client library on hostile input. The bootstrap parser (gRFC A27) on arbitrary
 * bytes, and the response handling on arbitrary bytes read as responses from the server.
 */
class ClientFuzzTest {
  static final List<ResourceType> WATCHED =
      List.of(ResourceType.CLUSTER, ResourceType.ENDPOINT, ResourceType.LISTENER);

  /** A bootstrap is parsed or refused with a BootstrapException naming the field; nothing else. */
  @FuzzTest
  void anyBootstrapJsonParsesOrIsRefusedWithABootstrapException(byte[] input) {
    Bootstrap b;
    try {
      b = Bootstrap.fromJson(new String(input, StandardCharsets.UTF_8));
    } catch (BootstrapException refused) {
      assertThat(refused.field()).isNotNull();
      return;
    }
    assertThat(b.servers()).as("a usable bootstrap names a server").isNotEmpty();
    assertThat(b.primary()).isNotNull();
  }

  /**
   * Arbitrary bytes as the server's responses: the first byte picks the variant (SotW or Delta,
   * ADS or per type), then each chunk (two bytes of length, then the message) is one response on
   * one of the client's streams. Nothing escapes the client, and it answers every response of a
   * type it asked for with an ACK or a NACK carrying its nonce (spec "ACK/NACK and resource type
   * instance version"); a SotW NACK carries the version it last accepted, an ACK the new one.
   */
  @FuzzTest
  void anyResponseBytesAreAckedOrNackedNeverThrown(byte[] input) {
    if (input.length == 0) {
      return;
    }
    boolean delta = (input[0] & 1) != 0;
    boolean ads = (input[0] & 2) != 0;
    FakeTransport transport = new FakeTransport();
    try (XdsClient client = new XdsClient(Bootstrap.forServer("fake:1", Node.newBuilder()
        .setId("fuzz").build()), XdsClient.Options.defaults()
        .withProtocol(delta ? XdsClient.Protocol.DELTA : XdsClient.Protocol.SOTW)
        .withMode(ads ? XdsClient.Mode.ADS : XdsClient.Mode.PER_TYPE)
        .withCallbackExecutor(Runnable::run).withScheduler(new FakeScheduler())
        .withRandom(() -> 0.5), transport)) {
      client.watchAll(ResourceType.CLUSTER, new RecordingWatcher());
      client.watch(ResourceType.ENDPOINT, "a", new RecordingWatcher());
      client.watch(ResourceType.LISTENER, "l", new RecordingWatcher());
      // Per stream and type: on per-type streams a response may name another stream's type.
      Map<String, String> accepted = new java.util.HashMap<>();
      int at = 1;
      while (at + 2 <= input.length) {
        int call = input[at] & 0xff;
        int length = Math.min(input[at + 1] & 0xff, input.length - at - 2);
        byte[] message = java.util.Arrays.copyOfRange(input, at + 2, at + 2 + length);
        at += 2 + length;
        if (delta) {
          respondDelta(transport, call, message);
        } else {
          respondSotw(transport, call, message, accepted);
        }
      }
    }
  }

  private static void respondSotw(FakeTransport transport, int call, byte[] message,
      Map<String, String> accepted) {
    DiscoveryResponse r;
    try {
      r = DiscoveryResponse.parseFrom(message);
    } catch (InvalidProtocolBufferException e) {
      return; // gRPC would not have delivered these bytes
    }
    var calls = transport.sotwCalls;
    var c = calls.get(call % calls.size());
    String stream = (call % calls.size()) + "/";
    List<DiscoveryRequest> before = new ArrayList<>(c.requests);
    c.respond(r);
    ResourceType type = ResourceType.fromTypeUrl(r.getTypeUrl()).orElse(null);
    if (type == null || !WATCHED.contains(type) || c.cancelled) {
      return;
    }
    List<DiscoveryRequest> answers = new ArrayList<>(c.requests);
    answers.subList(0, before.size()).clear();
    List<DiscoveryRequest> forIt = answers.stream()
        .filter(q -> q.getResponseNonce().equals(r.getNonce())
            && q.getTypeUrl().equals(r.getTypeUrl())).toList();
    if (forIt.isEmpty()) {
      return; // a per-type stream of another type: not the client's to answer for that type
    }
    assertThat(forIt).as("one answer to %s", r.getNonce()).hasSize(1);
    DiscoveryRequest answer = forIt.get(0);
    if (answer.hasErrorDetail()) {
      assertThat(answer.getVersionInfo()).as("a NACK carries the version last accepted")
          .isEqualTo(accepted.getOrDefault(stream + type, ""));
    } else {
      assertThat(answer.getVersionInfo()).as("an ACK carries the response's version")
          .isEqualTo(r.getVersionInfo());
      accepted.put(stream + type, r.getVersionInfo());
    }
  }

  private static void respondDelta(FakeTransport transport, int call, byte[] message) {
    DeltaDiscoveryResponse r;
    try {
      r = DeltaDiscoveryResponse.parseFrom(message);
    } catch (InvalidProtocolBufferException e) {
      return;
    }
    var calls = transport.deltaCalls;
    var c = calls.get(call % calls.size());
    int before = c.requests.size();
    c.respond(r);
    ResourceType type = ResourceType.fromTypeUrl(r.getTypeUrl()).orElse(null);
    if (type == null || !WATCHED.contains(type) || c.cancelled) {
      return;
    }
    List<DeltaDiscoveryRequest> answers = new ArrayList<>(c.requests);
    answers.subList(0, before).clear();
    assertThat(answers.stream().filter(q -> q.getResponseNonce().equals(r.getNonce())
        && q.getTypeUrl().equals(r.getTypeUrl())).count()).as("answers to %s", r.getNonce())
        .isLessThanOrEqualTo(1);
  }
}
