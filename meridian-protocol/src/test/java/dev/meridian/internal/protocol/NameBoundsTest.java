package dev.meridian.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.protocol.FederationRulesTest.Variant;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.ResourceError;
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
  private static final ResourceType EDS = ResourceType.ENDPOINT;
  private static final ServedConfig CONFIG = Fixtures.config(Fixtures.endpoints("known", 8080));

  /** One stream of the variant asking for endpoints (FederationRulesTest's), with the bound. */
  @SuppressWarnings("unchecked")
  static FederationRulesTest.Client client(Variant v, int maxNames) {
    FederationRulesTest.Client c = new FederationRulesTest.Client(v, EDS, CONFIG);
    if (c.delta()) {
      ((TwinStream<DeltaDiscoveryRequest>) c.twin).withMaxResourceNames(maxNames);
    } else {
      ((TwinStream<DiscoveryRequest>) c.twin).withMaxResourceNames(maxNames);
    }
    return c;
  }

  static String[] names(List<String> names) {
    return names.toArray(String[]::new);
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
    FederationRulesTest.Client c = client(v, 50);
    List<Outcome> out = c.ask(names(unknown(0, 51)));
    Outcome.Close close = FederationRulesTest.closed(out);
    assertThat(close.code()).isEqualTo(Outcome.CloseCode.RESOURCE_EXHAUSTED);
    assertThat(close.message()).contains("names 51 resources", "at most 50",
        "--max-resource-names");
    assertThat(out).noneMatch(o -> o instanceof Outcome.Send);
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void aStreamGrowingPastTheBoundInStepsIsEnded(Variant v) {
    FederationRulesTest.Client c = client(v, 50);
    assertThat(c.ask(names(unknown(0, 30)))).noneMatch(o -> o instanceof Outcome.Close);
    c.ack();
    // SotW repeats all 60 names (the request itself is over); Delta adds 30 to the 30 held.
    List<Outcome> out = c.ask(names(unknown(30, 30)));
    Outcome.Close close = FederationRulesTest.closed(out);
    assertThat(close.code()).isEqualTo(Outcome.CloseCode.RESOURCE_EXHAUSTED);
    assertThat(close.message()).contains("60 resources");
    assertThat(out).noneMatch(o -> o instanceof Outcome.Send);
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void aRequestAtTheBoundIsServed(Variant v) {
    FederationRulesTest.Client c = client(v, 50);
    List<String> names = new ArrayList<>(unknown(0, 49));
    names.add("known");
    List<Outcome> out = c.ask(names(names));
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
    FederationRulesTest.Client c = client(v, XdsStream.DEFAULT_MAX_RESOURCE_NAMES);
    List<String> asked = unknown(0, 250);
    List<Outcome> out = c.ask(names(asked));
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
    FederationRulesTest.Client c = client(v, XdsStream.DEFAULT_MAX_RESOURCE_NAMES);
    c.ask(names(unknown(0, 150)));
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
