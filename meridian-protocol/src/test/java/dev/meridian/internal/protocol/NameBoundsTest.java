package dev.meridian.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.protocol.FederationRulesTest.Variant;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.ResourceError;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What one client may ask of the core, on every variant: a bound on the resource names one
 * request carries and one stream is subscribed to ({@code --max-resource-names}; beyond, the
 * stream ends RESOURCE_EXHAUSTED), and per-resource errors (TP3 {@code resource_errors}) said a
 * bounded number at a time, so a request naming a million unknown names is not answered with a
 * million errors.
 */
class NameBoundsTest {
  private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
  private static final ResourceType EDS = ResourceType.ENDPOINT;
  private static final ServedConfig CONFIG = Fixtures.config(Fixtures.endpoints("known", 8080));

  /** One stream of the variant asking for endpoints. */
  static final class Client extends VariantClient {
    final Variant variant;
    private boolean sentNode;
    /** SotW: every name asked for so far (each request repeats them). */
    private final List<String> names = new ArrayList<>();

    Client(Variant variant, int maxNames) {
      super(switch (variant) {
        case SOTW_ADS -> TwinStream.sotwAds(CLOCK);
        case SOTW_PER_TYPE -> TwinStream.sotwPerType(EDS, CLOCK);
        case DELTA_ADS -> TwinStream.deltaAds(CLOCK);
        case DELTA_PER_TYPE -> TwinStream.deltaPerType(EDS, CLOCK);
      }, CONFIG);
      this.variant = variant;
      if (twin.stream instanceof SotwStream) {
        ((TwinStream<DiscoveryRequest>) twin).withMaxResourceNames(maxNames);
      } else {
        ((TwinStream<DeltaDiscoveryRequest>) twin).withMaxResourceNames(maxNames);
      }
    }

    boolean delta() {
      return variant == Variant.DELTA_ADS || variant == Variant.DELTA_PER_TYPE;
    }

    @SuppressWarnings("unchecked")
    List<Outcome> ask(List<String> more) {
      names.addAll(more);
      List<Outcome> out;
      if (delta()) {
        DeltaDiscoveryRequest.Builder b = DeltaDiscoveryRequest.newBuilder()
            .setTypeUrl(EDS.typeUrl()).setResponseNonce(lastNonce)
            .addAllResourceNamesSubscribe(more);
        if (!sentNode) {
          b.setNode(Fixtures.node("node-1"));
        }
        out = ((TwinStream<DeltaDiscoveryRequest>) twin).onRequest(b.build(), config);
      } else {
        DiscoveryRequest.Builder b = DiscoveryRequest.newBuilder().setResponseNonce(lastNonce)
            .setTypeUrl(EDS.typeUrl()).addAllResourceNames(names);
        if (!sentNode) {
          b.setNode(Fixtures.node("node-1"));
        }
        out = ((TwinStream<DiscoveryRequest>) twin).onRequest(b.build(), config);
      }
      sentNode = true;
      remember(out);
      return out;
    }

    List<Outcome> ack() {
      return ask(List.of());
    }
  }

  static List<String> unknown(int from, int count) {
    List<String> names = new ArrayList<>();
    for (int i = from; i < from + count; i++) {
      names.add(String.format("missing-%05d", i));
    }
    return names;
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void aRequestNamingMoreThanTheBoundEndsTheStreamResourceExhausted(Variant v) {
    Client c = new Client(v, 50);
    List<Outcome> out = c.ask(unknown(0, 51));
    Outcome.Close close = FederationRulesTest.closed(out);
    assertThat(close.code()).isEqualTo(Outcome.CloseCode.RESOURCE_EXHAUSTED);
    assertThat(close.message()).contains("names 51 resources", "at most 50",
        "--max-resource-names");
    assertThat(out).noneMatch(o -> o instanceof Outcome.Send);
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void aStreamGrowingPastTheBoundInStepsIsEnded(Variant v) {
    Client c = new Client(v, 50);
    assertThat(c.ask(unknown(0, 30))).noneMatch(o -> o instanceof Outcome.Close);
    c.ack();
    // SotW repeats all 60 names (the request itself is over); Delta adds 30 to the 30 held.
    List<Outcome> out = c.ask(unknown(30, 30));
    Outcome.Close close = FederationRulesTest.closed(out);
    assertThat(close.code()).isEqualTo(Outcome.CloseCode.RESOURCE_EXHAUSTED);
    assertThat(close.message()).contains("60 resources");
    assertThat(out).noneMatch(o -> o instanceof Outcome.Send);
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void aRequestAtTheBoundIsServed(Variant v) {
    Client c = new Client(v, 50);
    List<String> names = new ArrayList<>(unknown(0, 49));
    names.add("known");
    List<Outcome> out = c.ask(names);
    assertThat(out).noneMatch(o -> o instanceof Outcome.Close);
    assertThat(FederationRulesTest.sent(out)).containsExactly("known");
  }

  /**
   * TP3: unknown names are said a hundred a response, each once, all in the end: the rest follow
   * as the client ACKs, one response at a time (flow control as for any response).
   */
  @ParameterizedTest
  @EnumSource(Variant.class)
  void perResourceErrorsAreSaidAHundredAResponseUntilAllAreSaid(Variant v) {
    Client c = new Client(v, XdsStream.DEFAULT_MAX_RESOURCE_NAMES);
    List<String> asked = unknown(0, 250);
    List<Outcome> out = c.ask(asked);
    List<ResourceError> first = FederationRulesTest.errorList(out);
    assertThat(first).hasSize(TypeState.MAX_ERRORS_PER_RESPONSE);
    assertThat(first.get(0).getResourceName().getName()).isEqualTo("missing-00000");
    List<String> said = new ArrayList<>();
    List<Integer> perResponse = new ArrayList<>();
    while (out.stream().anyMatch(o -> o instanceof Outcome.Send)) {
      List<ResourceError> errors = FederationRulesTest.errorList(out);
      perResponse.add(errors.size());
      errors.forEach(e -> said.add(e.getResourceName().getName()));
      out = c.ack();
    }
    assertThat(perResponse).containsExactly(100, 100, 50);
    assertThat(said).containsExactlyElementsOf(asked);
  }

  /** A name that appears before its error was said is not said to be absent. */
  @ParameterizedTest
  @EnumSource(Variant.class)
  void aPendingErrorIsDroppedWhenItsNameAppears(Variant v) {
    Client c = new Client(v, XdsStream.DEFAULT_MAX_RESOURCE_NAMES);
    c.ask(unknown(0, 150));
    ServedConfig next = Fixtures.config(Fixtures.endpoints("known", 8080),
        Fixtures.endpoints("missing-00149", 9090));
    List<String> said = new ArrayList<>();
    List<String> sent = new ArrayList<>(FederationRulesTest.sent(c.reload(next)));
    List<Outcome> out = c.ack();
    while (out.stream().anyMatch(o -> o instanceof Outcome.Send)) {
      FederationRulesTest.errorList(out).forEach(e -> said.add(e.getResourceName().getName()));
      sent.addAll(FederationRulesTest.sent(out));
      out = c.ack();
    }
    assertThat(sent).contains("missing-00149");
    assertThat(said).hasSize(49).doesNotContain("missing-00149");
  }
}
