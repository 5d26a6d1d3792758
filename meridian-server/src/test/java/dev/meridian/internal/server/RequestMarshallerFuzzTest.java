package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;

/**
 * The request marshallers that share decoded name lists ({@link SharedNamesMarshaller}) on
 * arbitrary bytes: each request parses to exactly what protobuf's own parser gives, or, where that
 * parser refuses the bytes, fails the call INTERNAL. The input is built around a run of names
 * (their count, length and the spelling of their tag come from the fuzzer) between arbitrary
 * bytes, so that requests reach the sharing path (from 4 KiB of names); one marshaller of each
 * kind serves every input, as one serves every client, so its cache and reused buffer are
 * exercised across inputs too. A second pair allows only {@link #FEW} names, so that the count
 * that refuses a request before decoding it sees the same inputs: it refuses RESOURCE_EXHAUSTED
 * exactly the requests that protobuf parses with more names than that (or cannot parse).
 */
class RequestMarshallerFuzzTest {
  static final int FEW = 300;
  static final SharedNamesMarshaller<DiscoveryRequest> SOTW = SharedNamesMarshaller.sotw(
      AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod().getRequestMarshaller(),
      Bounds.DEFAULT_MAX_RESOURCE_NAMES);
  static final SharedNamesMarshaller<DeltaDiscoveryRequest> DELTA = SharedNamesMarshaller.delta(
      AggregatedDiscoveryServiceGrpc.getDeltaAggregatedResourcesMethod().getRequestMarshaller(),
      Bounds.DEFAULT_MAX_RESOURCE_NAMES);
  static final SharedNamesMarshaller<DiscoveryRequest> SOTW_FEW = SharedNamesMarshaller.sotw(
      AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod().getRequestMarshaller(),
      FEW);
  static final SharedNamesMarshaller<DeltaDiscoveryRequest> DELTA_FEW = SharedNamesMarshaller.delta(
      AggregatedDiscoveryServiceGrpc.getDeltaAggregatedResourcesMethod().getRequestMarshaller(),
      FEW);

  @FuzzTest
  void anyRequestParsesAsProtobufParsesItOrFailsTheCall(FuzzedDataProvider data) {
    byte[] bytes = request(data);
    check(SOTW, DiscoveryRequest.parser(), bytes, Bounds.DEFAULT_MAX_RESOURCE_NAMES);
    check(DELTA, DeltaDiscoveryRequest.parser(), bytes, Bounds.DEFAULT_MAX_RESOURCE_NAMES);
    check(SOTW_FEW, DiscoveryRequest.parser(), bytes, FEW);
    check(DELTA_FEW, DeltaDiscoveryRequest.parser(), bytes, FEW);
  }

  static byte[] request(FuzzedDataProvider data) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(data.consumeBytes(data.consumeInt(0, 64)));
    int names = data.consumeInt(0, 1500);
    int length = data.consumeInt(0, 200);
    int spelling = data.consumeInt(0, 3);
    int prefix = data.consumeInt(0, 3);
    for (int i = 0; i < names; i++) {
      switch (spelling) {
        case 0 -> out.write(0x1A); // field 3, length-delimited: as serializers write it
        case 1 -> out.writeBytes(new byte[] {(byte) 0x9A, 0x00}); // the same tag, two bytes
        case 2 -> out.write(i % 97 == 96 ? 0x22 : 0x1A); // another field inside the run
        default -> out.write(0x1A);
      }
      String name = "n" + (i % (prefix + 1)) + "-" + "x".repeat(length) + i;
      byte[] utf8 = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
      writeVarint(out, spelling == 3 && i == names - 1 ? utf8.length + 7 : utf8.length);
      out.writeBytes(utf8);
    }
    out.writeBytes(data.consumeRemainingAsBytes());
    return out.toByteArray();
  }

  /**
   * The names in a request's bytes as the fields occur (a map key repeated counts each time),
   * read with protobuf's own CodedInputStream: the reference for the marshaller's fast count.
   */
  static int wireNames(byte[] bytes, Message shape) {
    boolean delta = shape instanceof DeltaDiscoveryRequest;
    try {
      com.google.protobuf.CodedInputStream in = com.google.protobuf.CodedInputStream
          .newInstance(bytes);
      int names = 0;
      int versions = 0;
      for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
        int f = com.google.protobuf.WireFormat.getTagFieldNumber(tag);
        if (delta ? f == 3 || f == 4 || f == 8 || f == 9 : f == 3 || f == 7) {
          names++;
        } else if (delta && f == 5) {
          versions++;
        }
        in.skipField(tag);
      }
      return Math.max(names, versions);
    } catch (java.io.IOException e) {
      return -1;
    }
  }

  /** The resource names a request carries, as the protocol core counts them. */
  static int names(Message m) {
    return m instanceof DiscoveryRequest r ? dev.meridian.internal.protocol.SotwStream.namesOf(r)
        : dev.meridian.internal.protocol.DeltaStream.namesOf((DeltaDiscoveryRequest) m);
  }


  static void writeVarint(ByteArrayOutputStream out, int v) {
    while ((v & ~0x7f) != 0) {
      out.write((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out.write(v);
  }

  static <T extends Message> void check(SharedNamesMarshaller<T> marshaller, Parser<T> parser,
      byte[] bytes, int maxNames) {
    T expected;
    try {
      expected = parser.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      expected = null;
    }
    for (boolean knownLength : new boolean[] {true, false}) {
      java.io.InputStream in = knownLength ? SharedNamesMarshallerTest.known(bytes)
          : new ByteArrayInputStream(bytes);
      T parsed = marshaller.parse(in);
      SharedNamesMarshaller.Refusal refusal = SharedNamesMarshaller.refusal(parsed);
      Status refused = refusal == null ? null : refusal.status();
      if (refused != null && refused.getCode() == Status.Code.RESOURCE_EXHAUSTED) {
        if (expected != null) {
          // Counted as the fields occur (a repeated map key each time), or once parsed.
          assertThat(Math.max(names(expected), wireNames(bytes, expected)))
              .as("names of a request refused for their number").isGreaterThan(maxNames);
        }
        continue;
      }
      if (refused != null) {
        assertThat(refused.getCode()).isEqualTo(Status.Code.INTERNAL);
        assertThat(expected).as("protobuf parses what the marshaller refused").isNull();
        continue;
      }
      if (expected != null) {
        assertThat(names(expected)).as("names of a request let through").isLessThanOrEqualTo(maxNames);
      }
      assertThat(expected).as("protobuf refuses what the marshaller parsed").isNotNull();
      assertThat(parsed).isEqualTo(expected);
    }
  }
}
