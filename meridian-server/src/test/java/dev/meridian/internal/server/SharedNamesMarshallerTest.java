package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * SotW ACKs repeat the whole subscription, Delta clients subscribe to the same names: clients
 * sending the same names share one decoded list.
 */
class SharedNamesMarshallerTest {
  final SharedNamesMarshaller<DiscoveryRequest> marshaller = SharedNamesMarshaller.sotw(
      AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod().getRequestMarshaller(),
      Bounds.DEFAULT_MAX_RESOURCE_NAMES);
  final SharedNamesMarshaller<DeltaDiscoveryRequest> delta = SharedNamesMarshaller.delta(
      AggregatedDiscoveryServiceGrpc.getDeltaAggregatedResourcesMethod().getRequestMarshaller(),
      Bounds.DEFAULT_MAX_RESOURCE_NAMES);

  static List<String> names(int n, String prefix) {
    return IntStream.range(0, n).mapToObj(i -> prefix + i).toList();
  }

  static DiscoveryRequest ack(String node, String nonce, List<String> names) {
    return DiscoveryRequest.newBuilder().setNode(Node.newBuilder().setId(node))
        .setTypeUrl("type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment")
        .setVersionInfo("v1").setResponseNonce(nonce).addAllResourceNames(names).build();
  }

  DiscoveryRequest roundTrip(DiscoveryRequest r) {
    return marshaller.parse(new ByteArrayInputStream(r.toByteArray()));
  }

  @Test
  void clientsSendingTheSameLargeListShareOneDecodedList() {
    List<String> names = names(1000, "cluster-");
    DiscoveryRequest a = ack("node-a", "1", names);
    DiscoveryRequest b = ack("node-b", "7", names);
    DiscoveryRequest parsedA = roundTrip(a);
    DiscoveryRequest parsedB = roundTrip(b);
    assertThat(parsedA).isEqualTo(a);
    assertThat(parsedB).isEqualTo(b);
    // One list for both, not a copy per request: 1,000 ACKs of 10,000 names copy nothing.
    assertThat(parsedB.getResourceNamesList()).isSameAs(parsedA.getResourceNamesList());
  }

  @Test
  void smallRequestsAndOtherListsParseAsUsual() {
    DiscoveryRequest small = ack("n", "1", List.of("a", "b"));
    assertThat(roundTrip(small)).isEqualTo(small);
    DiscoveryRequest other = ack("n", "2", names(1000, "other-"));
    assertThat(roundTrip(other)).isEqualTo(other);
    DiscoveryRequest empty = ack("n", "3", List.of());
    assertThat(roundTrip(empty)).isEqualTo(empty);
  }

  @Test
  void namesInTwoRunsAmongOtherFieldsAreKeptInOrder() throws Exception {
    // Field order is free on the wire: names, then type_url, then more names.
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CodedOutputStream o = CodedOutputStream.newInstance(out);
    for (String n : names(500, "first-")) {
      o.writeString(DiscoveryRequest.RESOURCE_NAMES_FIELD_NUMBER, n);
    }
    o.writeString(DiscoveryRequest.TYPE_URL_FIELD_NUMBER, "t");
    for (String n : names(500, "second-")) {
      o.writeString(DiscoveryRequest.RESOURCE_NAMES_FIELD_NUMBER, n);
    }
    o.flush();
    byte[] bytes = out.toByteArray();
    DiscoveryRequest parsed = marshaller.parse(new ByteArrayInputStream(bytes));
    assertThat(parsed).isEqualTo(DiscoveryRequest.parseFrom(bytes));
    assertThat(parsed.getResourceNamesList()).hasSize(1000).startsWith("first-0").endsWith("second-499");
    assertThat(parsed.getTypeUrl()).isEqualTo("t");
  }

  @Test
  void theCacheIsBounded() {
    List<DiscoveryRequest> first = new java.util.ArrayList<>();
    for (int i = 0; i < 200; i++) {
      first.add(roundTrip(ack("n", "1", names(500, "set-" + i + "-"))));
    }
    // The 64 lists seen last are still held: sent again, they share the first decoding.
    for (int i = 136; i < 200; i++) {
      assertThat(roundTrip(ack("m", "2", names(500, "set-" + i + "-"))).getResourceNames(7))
          .as("set " + i).isSameAs(first.get(i).getResourceNames(7));
    }
    // The one before them was let go: decoded anew (equal, not the same strings).
    DiscoveryRequest again = roundTrip(ack("m", "2", names(500, "set-135-")));
    assertThat(again.getResourceNamesList()).isEqualTo(first.get(135).getResourceNamesList());
    assertThat(again.getResourceNames(7)).isNotSameAs(first.get(135).getResourceNames(7));
  }

  /** The code a parsed request was refused with, or null: a request. */
  static Status.Code refused(Object parsed) {
    SharedNamesMarshaller.Refusal r = SharedNamesMarshaller.refusal(parsed);
    return r == null ? null : r.status().getCode();
  }

  @Test
  void aRequestNamingMoreResourcesThanAllowedIsRefusedBeforeItsNamesAreDecoded() {
    SharedNamesMarshaller<DiscoveryRequest> few = SharedNamesMarshaller.sotw(
        AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod().getRequestMarshaller(),
        500);
    DiscoveryRequest at = ack("n", "1", names(500, "cluster-"));
    assertThat(few.parse(known(at.toByteArray()))).isEqualTo(at);
    DiscoveryRequest over = ack("n", "1", names(501, "cluster-"));
    Status s = SharedNamesMarshaller.refusal(few.parse(known(over.toByteArray()))).status();
    assertThat(s.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(s.getDescription()).contains("at most 500", "--max-resource-names");
    // Delta: subscribed and unsubscribed names count together; a reconnect's resumed versions,
    // which name the same resources as its subscriptions, count once.
    SharedNamesMarshaller<DeltaDiscoveryRequest> fewDelta = SharedNamesMarshaller.delta(
        AggregatedDiscoveryServiceGrpc.getDeltaAggregatedResourcesMethod().getRequestMarshaller(),
        500);
    DeltaDiscoveryRequest.Builder d = DeltaDiscoveryRequest.newBuilder().setTypeUrl("t");
    for (int i = 0; i < 300; i++) {
      d.addResourceNamesSubscribe("s" + i).addResourceNamesUnsubscribe("u" + i);
    }
    assertThat(refused(fewDelta.parse(known(d.build().toByteArray()))))
        .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    DeltaDiscoveryRequest.Builder reconnect = DeltaDiscoveryRequest.newBuilder().setTypeUrl("t");
    for (int i = 0; i < 450; i++) {
      reconnect.addResourceNamesSubscribe("s" + i).putInitialResourceVersions("s" + i, "1");
    }
    assertThat(refused(fewDelta.parse(known(reconnect.build().toByteArray())))).isNull();
    SharedNamesMarshaller.held();
    reconnect.putInitialResourceVersions("one-more-resumed", "1");
    for (int i = 450; i < 501; i++) {
      reconnect.putInitialResourceVersions("s" + i, "1");
    }
    assertThat(refused(fewDelta.parse(known(reconnect.build().toByteArray()))))
        .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    // A real request after a refusal is not taken for one.
    assertThat(refused(few.parse(known(at.toByteArray())))).isNull();
  }

  /**
   * A request holds its encoded bytes of the server's request memory from its parse until its
   * stream has handled it; the names a cache hit shares are not its own (it holds them only while
   * it is parsed), so a thousand clients ACKing the same 10,000 names hold only their few other
   * bytes each.
   */
  @Test
  void aRequestHoldsItsBytesOfTheServersRequestMemoryExceptNamesItShares() {
    RequestMemory memory = new RequestMemory(300_000); // while parsed, two such ACKs
    SharedNamesMarshaller<DiscoveryRequest> m = SharedNamesMarshaller.sotw(
        AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod().getRequestMarshaller(),
        Bounds.DEFAULT_MAX_RESOURCE_NAMES, memory);
    DiscoveryRequest ack = ack("n", "1", names(10_000, "cluster-"));
    int size = ack.getSerializedSize();
    assertThat(size).isBetween(120_000, 160_000);
    assertThat(m.parse(known(ack.toByteArray()))).isEqualTo(ack);
    SharedNamesMarshaller.Held first = SharedNamesMarshaller.held();
    assertThat(first.bytes()).isEqualTo(size); // a miss: its names were decoded for it
    assertThat(memory.held()).isEqualTo(size);
    assertThat(m.parse(known(ack.toByteArray()))).isEqualTo(ack);
    SharedNamesMarshaller.Held second = SharedNamesMarshaller.held();
    assertThat(second.bytes()).isLessThan(100); // a hit: node, version, nonce
    // A request of new names that does not fit beside the first is refused, nothing kept.
    DiscoveryRequest other = ack("n", "1", names(14_000, "other-"));
    assertThat(other.getSerializedSize()).isBetween(300_000 - size, 300_000);
    assertThat(refused(m.parse(known(other.toByteArray()))))
        .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(SharedNamesMarshaller.held()).isNull();
    first.release();
    second.release();
    assertThat(memory.held()).isZero();
    assertThat(m.parse(known(other.toByteArray()))).isEqualTo(other);
    // Parsed and never taken by a stream (its call ended): the next parse gives it back.
    m.parse(known(ack("n", "2", List.of("a")).toByteArray()));
    SharedNamesMarshaller.held().release();
    assertThat(memory.held()).isZero();
  }

  @Test
  void aBrokenRequestIsAnInternalErrorOfThatCallOnly() {
    byte[] bytes = ack("n", "1", names(1000, "cluster-")).toByteArray();
    byte[] truncated = java.util.Arrays.copyOf(bytes, bytes.length / 2); // cut inside the names
    assertThat(refused(marshaller.parse(new ByteArrayInputStream(truncated))))
        .isEqualTo(Status.Code.INTERNAL);
    // An unknown field is kept, as the plain parse keeps it.
    DiscoveryRequest withUnknown = ack("n", "1", names(1000, "cluster-")).toBuilder()
        .setUnknownFields(com.google.protobuf.UnknownFieldSet.newBuilder().addField(99,
            com.google.protobuf.UnknownFieldSet.Field.newBuilder()
                .addLengthDelimited(ByteString.copyFromUtf8("x")).build()).build()).build();
    assertThat(roundTrip(withUnknown)).isEqualTo(withUnknown);
  }

  static DeltaDiscoveryRequest subscribe(String node, List<String> names) {
    return DeltaDiscoveryRequest.newBuilder().setNode(Node.newBuilder().setId(node))
        .setTypeUrl("type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment")
        .addAllResourceNamesSubscribe(names).addResourceNamesUnsubscribe("old")
        .putInitialResourceVersions("cluster-1", "v1").setResponseNonce("3").build();
  }

  @Test
  void deltaClientsSubscribingToTheSameLargeListShareOneDecodedList() {
    // Spec "Incremental xDS": each Delta client names its subscription; at fleet scale the same
    // 10,000 EDS names arrive from every client (and again when warming clusters re-subscribe).
    List<String> names = names(1000, "cluster-");
    DeltaDiscoveryRequest a = subscribe("node-a", names);
    DeltaDiscoveryRequest b = subscribe("node-b", names);
    DeltaDiscoveryRequest parsedA = delta.parse(new ByteArrayInputStream(a.toByteArray()));
    DeltaDiscoveryRequest parsedB = delta.parse(new ByteArrayInputStream(b.toByteArray()));
    assertThat(parsedA).isEqualTo(a);
    assertThat(parsedB).isEqualTo(b);
    assertThat(parsedB.getResourceNamesUnsubscribeList()).containsExactly("old");
    assertThat(parsedB.getResourceNamesSubscribeList())
        .isSameAs(parsedA.getResourceNamesSubscribeList());
    // An ACK (no names) and a small change parse as usual.
    DeltaDiscoveryRequest small = subscribe("n", List.of("x"));
    assertThat(delta.parse(new ByteArrayInputStream(small.toByteArray()))).isEqualTo(small);
  }

  /** As gRPC hands a message over: a stream that knows its length (the reused-buffer path). */
  static java.io.InputStream known(byte[] bytes) {
    class Known extends ByteArrayInputStream implements io.grpc.KnownLength {
      Known() {
        super(bytes);
      }
    }
    return new Known();
  }

  @Test
  void aRequestReadIntoTheReusedBufferKeepsNothingOfTheNextOne() {
    DiscoveryRequest a = ack("node-a", "1", names(1000, "cluster-"));
    DiscoveryRequest b = ack("node-b", "2", names(600, "other-name-"));
    DiscoveryRequest parsedA = marshaller.parse(known(a.toByteArray()));
    DiscoveryRequest parsedB = marshaller.parse(known(b.toByteArray())); // overwrites the buffer
    DiscoveryRequest small = ack("n", "3", List.of("x"));
    assertThat(marshaller.parse(known(small.toByteArray()))).isEqualTo(small);
    assertThat(parsedA).isEqualTo(a);
    assertThat(parsedB).isEqualTo(b);
    DiscoveryRequest again = marshaller.parse(known(ack("node-c", "4", a.getResourceNamesList())
        .toByteArray()));
    assertThat(again.getResourceNamesList()).isSameAs(parsedA.getResourceNamesList());
    assertThat(again.getNode().getId()).isEqualTo("node-c");
  }

  @Test
  void namesLongerThanOneLengthByteAndTruncatedOnesParseAsProtobufSays() {
    String longPrefix = "xdstp://authority.example/envoy.config.cluster.v3.Cluster/" + "p".repeat(150) + "/";
    DiscoveryRequest r = ack("n", "1", names(100, longPrefix)); // each name's length: two bytes
    assertThat(marshaller.parse(known(r.toByteArray()))).isEqualTo(r);
    byte[] bytes = r.toByteArray();
    for (int cut : new int[] {bytes.length - 1, bytes.length / 2, bytes.length / 3 + 1}) {
      byte[] truncated = java.util.Arrays.copyOf(bytes, cut);
      assertThat(refused(marshaller.parse(known(truncated)))).isEqualTo(Status.Code.INTERNAL);
    }
  }

  @Test
  void theNamesRunIsFoundWhereverItStandsAmongTheOtherFields() throws Exception {
    // Field order is free on the wire: names first, then node and nonce.
    DiscoveryRequest r = ack("n", "9", names(1000, "cluster-"));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CodedOutputStream o = CodedOutputStream.newInstance(out);
    for (String n : r.getResourceNamesList()) {
      o.writeString(DiscoveryRequest.RESOURCE_NAMES_FIELD_NUMBER, n);
    }
    o.writeMessage(DiscoveryRequest.NODE_FIELD_NUMBER, r.getNode());
    o.writeString(DiscoveryRequest.RESPONSE_NONCE_FIELD_NUMBER, "9");
    o.writeString(DiscoveryRequest.VERSION_INFO_FIELD_NUMBER, "v1");
    o.writeString(DiscoveryRequest.TYPE_URL_FIELD_NUMBER, r.getTypeUrl());
    o.flush();
    assertThat(marshaller.parse(known(out.toByteArray()))).isEqualTo(r);
  }

  @Test
  void aNamesTagSpelledInTwoBytesIsReadAsProtobufReadsIt() throws Exception {
    // A varint may carry needless continuation bytes: 0x9A 0x00 is tag 26 (field 3, length-
    // delimited), as 0x1A is. The fast skip does not know that spelling; protobuf does.
    DiscoveryRequest r = ack("n", "1", names(1000, "cluster-"));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CodedOutputStream o = CodedOutputStream.newInstance(out);
    o.writeMessage(DiscoveryRequest.NODE_FIELD_NUMBER, r.getNode());
    for (String n : r.getResourceNamesList()) {
      o.writeRawByte((byte) 0x9A);
      o.writeRawByte((byte) 0x00);
      o.writeStringNoTag(n);
    }
    o.writeString(DiscoveryRequest.RESPONSE_NONCE_FIELD_NUMBER, "1");
    o.writeString(DiscoveryRequest.VERSION_INFO_FIELD_NUMBER, "v1");
    o.writeString(DiscoveryRequest.TYPE_URL_FIELD_NUMBER, r.getTypeUrl());
    o.flush();
    assertThat(marshaller.parse(known(out.toByteArray()))).isEqualTo(r);
    assertThat(marshaller.parse(new ByteArrayInputStream(out.toByteArray()))).isEqualTo(r);
  }
}
