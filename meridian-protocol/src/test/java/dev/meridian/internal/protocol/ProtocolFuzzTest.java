package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Issue 25, fuzzing the protocol core. The corpus (ProtocolFuzzTestInputs/) runs as regression
 * tests in every build; {@code JAZZER_FUZZ=1} fuzzes (docs/reliability.md).
 */
class ProtocolFuzzTest {
  /** How many steps one input may take: enough for any sequence of interest, bounded in time. */
  static final int MAX_STEPS = 200;
  static final List<ResourceType> PER_TYPE = List.of(ResourceType.CLUSTER, ResourceType.ENDPOINT,
      ResourceType.LISTENER, ResourceType.ROUTE);

  /**
   * The fuzzer plays one to three clients (SotW or Delta, ADS or one type each) through requests,
   * ACKs, NACKs, reconnects and config changes: the model of {@link SharingDifferentialTest}
   * checks after every step that nothing escapes and no stream is closed; at most one un-ACKed
   * response per type (spec "When to send an update"); a NACKed version is not resent; nothing is
   * sent that the client holds at that version (per-type streams: ADS resends for warming, spec
   * "Resource warming"); every resource is of the response's type; and the interning and plain
   * sharings answer the same bytes.
   */
  @FuzzTest
  void anySequenceOfRequestsAcksNacksReconnectsAndChangesKeepsTheInvariants(
      FuzzedDataProvider data) {
    SharingDifferentialTest.Run run = new SharingDifferentialTest.Run(new FuzzedRandom(data),
        step -> step < MAX_STEPS && data.remainingBytes() > 0);
    int clients = data.consumeInt(1, 3);
    for (int i = 0; i < clients; i++) {
      boolean delta = data.consumeBoolean();
      int variant = data.consumeInt(0, PER_TYPE.size()); // 0: ADS
      ResourceType perType = variant == 0 ? null : PER_TYPE.get(variant - 1);
      boolean fleet = data.consumeBoolean();
      run.clients.add(delta ? new SharingDifferentialTest.DeltaClient(run, perType, fleet)
          : new SharingDifferentialTest.SotwClient(run, perType, fleet));
    }
    run.run();
  }

  /**
   * Hostile requests: arbitrary bytes read as DiscoveryRequest or DeltaDiscoveryRequest, one after
   * another on one stream, between config changes. The core answers every one with outcomes (a
   * Close for what it refuses), never an exception; what it sends is of the type it says.
   */
  @FuzzTest
  void arbitraryRequestMessagesGetOutcomesNeverAnException(FuzzedDataProvider data) {
    boolean delta = data.consumeBoolean();
    int variant = data.consumeInt(0, PER_TYPE.size());
    ResourceType perType = variant == 0 ? null : PER_TYPE.get(variant - 1);
    ServedConfig[] configs = {
        Fixtures.config(Fixtures.cluster("c0"), Fixtures.endpoints("c0", 1),
            SequencingTest.listener("l0", "r0"), Fixtures.route("r0", "c0")),
        Fixtures.config(Fixtures.clusterWithTimeout("c0", 2), Fixtures.cluster("c1"),
            Fixtures.endpoints("c1", 2)),
        Fixtures.config()};
    XdsStream<?, ?> stream = delta
        ? (perType == null ? DeltaStream.ads(MakeBeforeBreakTest.FIXED, Sharing.interning())
            : DeltaStream.perType(perType, MakeBeforeBreakTest.FIXED, Sharing.interning()))
        : (perType == null ? SotwStream.ads(MakeBeforeBreakTest.FIXED, Sharing.interning())
            : SotwStream.perType(perType, MakeBeforeBreakTest.FIXED, Sharing.interning()));
    ServedConfig config = configs[0];
    while (data.remainingBytes() > 0) {
      List<Outcome> out;
      if (data.consumeInt(0, 7) == 0) {
        ServedConfig next = configs[data.consumeInt(0, configs.length - 1)];
        var changes = new java.util.HashMap<String, java.util.Map<ResourceType, java.util.Set<String>>>();
        for (String g : next.groupNames()) {
          changes.put(g, next.snapshot(g).changedSince(config.snapshot(g)));
        }
        config = next;
        out = stream.onConfig(next, changes);
      } else {
        byte[] bytes = data.consumeBytes(data.consumeInt(0, 400));
        out = delta ? onDelta((DeltaStream) stream, bytes, config)
            : onSotw((SotwStream) stream, bytes, config);
      }
      for (Outcome o : out) {
        if (o instanceof Outcome.Send s) {
          assertOfType(s);
        }
      }
      if (out.stream().anyMatch(o -> o instanceof Outcome.Close)) {
        return; // the transport ends the stream
      }
    }
  }

  private static List<Outcome> onSotw(SotwStream stream, byte[] bytes, ServedConfig config) {
    try {
      return stream.onRequest(DiscoveryRequest.parseFrom(bytes), config);
    } catch (InvalidProtocolBufferException e) {
      return List.of(); // gRPC would have refused these bytes before the core
    }
  }

  private static List<Outcome> onDelta(DeltaStream stream, byte[] bytes, ServedConfig config) {
    try {
      return stream.onRequest(DeltaDiscoveryRequest.parseFrom(bytes), config);
    } catch (InvalidProtocolBufferException e) {
      return List.of();
    }
  }

  private static void assertOfType(Outcome.Send s) {
    List<Any> resources = new ArrayList<>();
    String typeUrl;
    if (s.response() instanceof DiscoveryResponse r) {
      typeUrl = r.getTypeUrl();
      resources.addAll(r.getResourcesList());
    } else {
      DeltaDiscoveryResponse r = (DeltaDiscoveryResponse) s.response();
      typeUrl = r.getTypeUrl();
      r.getResourcesList().stream().filter(Resource::hasResource)
          .forEach(x -> resources.add(x.getResource()));
    }
    assertThat(typeUrl).isEqualTo(s.type().typeUrl());
    for (Any a : resources) {
      SharingDifferentialTest.Client.ofType(s.type(), typeUrl, a);
    }
  }

  /**
   * The fuzzer's bytes as the run's choices: every nextInt/nextBoolean/shuffle of the model reads
   * the input, so the fuzzer steers the sequence (and an exhausted input picks the lowest).
   */
  static final class FuzzedRandom extends Random {
    private final transient FuzzedDataProvider data;

    FuzzedRandom(FuzzedDataProvider data) {
      this.data = data;
    }

    @Override
    public int nextInt(int bound) {
      return data.consumeInt(0, bound - 1);
    }

    @Override
    public boolean nextBoolean() {
      return data.consumeBoolean();
    }

    @Override
    protected int next(int bits) {
      return data.consumeInt() >>> (32 - bits);
    }
  }
}
