package dev.meridian.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.xds.ResourceType;

import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.ResourceError;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 26 in the core, on every variant each rule applies to: xdstp names matched by their
 * canonical form (xDS TP1 "Normalization"), authorities this server does not serve (gRFC A47),
 * glob collections (TP1 "Glob"; Incremental only, TP1 "Discovery request and responses") and
 * per-resource errors (TP3, {@code resource_errors} of DiscoveryResponse and
 * DeltaDiscoveryResponse).
 */
class FederationRulesTest {
  private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
  private static final String CLA = "envoy.config.endpoint.v3.ClusterLoadAssignment";
  private static final String MINE = "xdstp://mine.example/" + CLA + "/";
  private static final int NOT_FOUND = 5;

  enum Variant { SOTW_ADS, SOTW_PER_TYPE, DELTA_ADS, DELTA_PER_TYPE }

  /** One client on one stream of the variant, asking for one type. */
  static final class Client extends VariantClient {
    final Variant variant;
    final ResourceType type;
    private boolean sentNode;
    private List<String> names = new ArrayList<>();

    Client(Variant variant, ResourceType type, ServedConfig config) {
      super(switch (variant) {
        case SOTW_ADS -> TwinStream.sotwAds(CLOCK);
        case SOTW_PER_TYPE -> TwinStream.sotwPerType(type, CLOCK);
        case DELTA_ADS -> TwinStream.deltaAds(CLOCK);
        case DELTA_PER_TYPE -> TwinStream.deltaPerType(type, CLOCK);
      }, config);
      this.variant = variant;
      this.type = type;
    }

    boolean delta() {
      return variant == Variant.DELTA_ADS || variant == Variant.DELTA_PER_TYPE;
    }

    /** Subscribes to more names (SotW: the request lists all names asked for so far). */
    List<Outcome> ask(String... more) {
      names.addAll(Arrays.asList(more));
      return send(Arrays.asList(more), List.of());
    }

    /** SotW: a new stream's first request, holding {@code version} of these names. */
    @SuppressWarnings("unchecked")
    List<Outcome> resume(String version, String... asked) {
      names.addAll(Arrays.asList(asked));
      sentNode = true;
      List<Outcome> out = ((TwinStream<DiscoveryRequest>) twin).onRequest(DiscoveryRequest
          .newBuilder().setNode(Fixtures.node("node-1")).setTypeUrl(type.typeUrl())
          .setVersionInfo(version).addAllResourceNames(names).build(), config);
      remember(out);
      return out;
    }

    /** Drops names. */
    List<Outcome> drop(String... less) {
      names.removeAll(Arrays.asList(less));
      return send(List.of(), Arrays.asList(less));
    }

    /** ACKs the last response. */
    List<Outcome> ack() {
      return send(List.of(), List.of());
    }

    @SuppressWarnings("unchecked")
    private List<Outcome> send(List<String> subscribe, List<String> unsubscribe) {
      List<Outcome> out;
      if (delta()) {
        DeltaDiscoveryRequest.Builder b = DeltaDiscoveryRequest.newBuilder()
            .setTypeUrl(type.typeUrl()).setResponseNonce(lastNonce)
            .addAllResourceNamesSubscribe(subscribe).addAllResourceNamesUnsubscribe(unsubscribe);
        if (!sentNode) {
          b.setNode(Fixtures.node("node-1"));
        }
        out = ((TwinStream<DeltaDiscoveryRequest>) twin).onRequest(b.build(), config);
      } else {
        DiscoveryRequest.Builder b = DiscoveryRequest.newBuilder().setResponseNonce(lastNonce)
            .setTypeUrl(type.typeUrl()).addAllResourceNames(names);
        if (!sentNode) {
          b.setNode(Fixtures.node("node-1"));
        }
        out = ((TwinStream<DiscoveryRequest>) twin).onRequest(b.build(), config);
      }
      sentNode = true;
      remember(out);
      return out;
    }

  }

  static XdsResource cla(String name) {
    return Fixtures.endpoints(name, 8080);
  }

  static ServedConfig config(XdsResource... resources) {
    return Fixtures.config(resources);
  }

  /** The resource names sent, in order (SotW resources, Delta resources). */
  static List<String> sent(List<Outcome> out) {
    List<String> names = new ArrayList<>();
    for (Outcome o : out) {
      if (o instanceof Outcome.Send s) {
        if (s.response() instanceof DiscoveryResponse r) {
          names.addAll(Fixtures.names(r));
        } else {
          names.addAll(DeltaPeer.names((DeltaDiscoveryResponse) s.response()));
        }
      }
    }
    return names;
  }

  static List<String> removed(List<Outcome> out) {
    return TrustRulesTest.removed(out);
  }

  /** The per-resource errors of every response: name → google.rpc.Code. */
  static Map<String, Integer> errors(List<Outcome> out) {
    Map<String, Integer> errors = new LinkedHashMap<>();
    for (ResourceError e : errorList(out)) {
      errors.put(e.getResourceName().getName(), e.getErrorDetail().getCode());
    }
    return errors;
  }

  static List<ResourceError> errorList(List<Outcome> out) {
    List<ResourceError> errors = new ArrayList<>();
    for (Outcome o : out) {
      if (o instanceof Outcome.Send s) {
        errors.addAll(s.response() instanceof DiscoveryResponse r ? r.getResourceErrorsList()
            : ((DeltaDiscoveryResponse) s.response()).getResourceErrorsList());
      }
    }
    return errors;
  }

  static Outcome.Close closed(List<Outcome> out) {
    return TrustRulesTest.closed(out);
  }

  // --- TP1 "Normalization" ---

  @ParameterizedTest
  @EnumSource(Variant.class)
  void xdstpNameIsMatchedByItsCanonicalForm(Variant v) {
    String canonical = MINE + "svc?a=1&b=%2F";
    Client c = new Client(v, ResourceType.ENDPOINT, config(cla(canonical)));
    List<Outcome> out = c.ask(MINE + "svc?b=%2f&a=1"); // parameters unsorted, lower-case hex
    assertThat(sent(out)).containsExactly(canonical);
    assertThat(errors(out)).isEmpty();
  }

  // --- gRFC A47: serve --authority ---

  @ParameterizedTest
  @EnumSource(Variant.class)
  void nameOfAnAuthorityNotServedIsAnsweredAsDoesNotExist(Variant v) {
    String theirs = "xdstp://theirs.example/" + CLA + "/svc";
    ServedConfig served = config(cla(MINE + "svc"), cla(theirs), cla("plain"))
        .servingAuthorities(Set.of("mine.example"));
    Client c = new Client(v, ResourceType.ENDPOINT, served);
    List<Outcome> out = c.ask(MINE + "svc", theirs, "plain");
    assertThat(sent(out)).containsExactly("plain", MINE + "svc");
    if (c.delta()) {
      assertThat(removed(out)).containsExactly(theirs);
    }
    assertThat(errors(out)).containsExactly(Map.entry(theirs, NOT_FOUND));
    assertThat(errorList(out).get(0).getErrorDetail().getMessage())
        .contains("authority 'theirs.example'", "--authority");
  }

  // --- TP1 "Glob" (Incremental) ---

  private static final String GLOB = MINE + "svc/*";

  private static ServedConfig collection(String... ids) {
    List<XdsResource> all = new ArrayList<>();
    for (String id : ids) {
      all.add(cla(MINE + id));
    }
    return new ServedConfig(Snapshot.of(all), List.of());
  }

  @ParameterizedTest
  @EnumSource(value = Variant.class, names = {"DELTA_ADS", "DELTA_PER_TYPE"})
  void globCollectionDeliversEveryMemberUnderItsPathWithItsFullName(Variant v) {
    Client c = new Client(v, ResourceType.ENDPOINT,
        collection("svc/a", "svc/b", "svc/deeper/c", "other/d", "svc/e?k=v", "svc"));
    List<Outcome> out = c.ask(GLOB);
    // Directly under svc/, with the same (no) context parameters: not svc/deeper/c, other/d,
    // svc/e?k=v nor svc itself.
    assertThat(sent(out)).containsExactly(MINE + "svc/a", MINE + "svc/b");
    assertThat(removed(out)).isEmpty();
    assertThat(errors(out)).isEmpty(); // the collection's name is not a resource
  }

  @ParameterizedTest
  @EnumSource(value = Variant.class, names = {"DELTA_ADS", "DELTA_PER_TYPE"})
  void globCollectionMatchesOnlyMembersWithTheSameContextParameters(Variant v) {
    Client c = new Client(v, ResourceType.ENDPOINT,
        collection("svc/a", "svc/e?k=v", "svc/f?k=v&z=1", "svc/g?k=w"));
    assertThat(sent(c.ask(MINE + "svc/*?k=v"))).containsExactly(MINE + "svc/e?k=v");
  }

  @ParameterizedTest
  @EnumSource(value = Variant.class, names = {"DELTA_ADS", "DELTA_PER_TYPE"})
  void globCollectionAddsAndRemovesMembersAsTheConfigChanges(Variant v) {
    Client c = new Client(v, ResourceType.ENDPOINT, collection("svc/a", "svc/b"));
    c.ask(GLOB);
    c.ack();
    List<Outcome> out = new ArrayList<>(c.reload(collection("svc/b", "svc/c", "other/x")));
    out.addAll(c.ack()); // (on ADS the removal follows, make-before-break)
    assertThat(sent(out)).containsExactly(MINE + "svc/c");
    assertThat(removed(out)).containsExactly(MINE + "svc/a"); // the full name
    assertThat(errors(out)).isEmpty(); // a member removed was never asked for by name
    c.ack();
    assertThat(sent(c.reload(collection("svc/b", "svc/c", "other/y")))).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(value = Variant.class, names = {"DELTA_ADS", "DELTA_PER_TYPE"})
  void unsubscribingAGlobCollectionNeedsNoAnswerAndAResubscribeResendsItsMembers(Variant v) {
    Client c = new Client(v, ResourceType.ENDPOINT, collection("svc/a", "svc/b"));
    c.ask(GLOB);
    c.ack();
    assertThat(c.drop(GLOB)).noneMatch(o -> o instanceof Outcome.Send);
    assertThat(sent(c.ask(GLOB))).containsExactly(MINE + "svc/a", MINE + "svc/b");
  }

  @ParameterizedTest
  @EnumSource(value = Variant.class, names = {"DELTA_ADS", "DELTA_PER_TYPE"})
  void memberDroppedByNameStaysHeldThroughItsGlobCollectionAndItsRemovalIsSent(Variant v) {
    // TP1 "Glob": dropping the name leaves the member subscribed through the collection, so its
    // deletion is still the client's to hear. (Found in review: the removal was never sent.)
    Client c = new Client(v, ResourceType.ENDPOINT, collection("svc/a", "svc/b"));
    c.ask(GLOB, MINE + "svc/a");
    c.ack();
    assertThat(c.drop(MINE + "svc/a")).noneMatch(o -> o instanceof Outcome.Send);
    List<Outcome> out = new ArrayList<>(c.reload(collection("svc/b")));
    out.addAll(c.ack()); // (on ADS the removal follows, make-before-break)
    assertThat(removed(out)).containsExactly(MINE + "svc/a");
    assertThat(sent(out)).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(value = Variant.class, names = {"DELTA_ADS", "DELTA_PER_TYPE"})
  void memberAskedForByNameStaysWhenItsGlobCollectionIsDropped(Variant v) {
    Client c = new Client(v, ResourceType.ENDPOINT, collection("svc/a", "svc/b"));
    c.ask(GLOB, MINE + "svc/a");
    c.ack();
    c.drop(GLOB);
    List<Outcome> out = c.reload(collection("svc/a"));
    assertThat(removed(out)).isEmpty(); // svc/b was held through the collection only: forgotten
    c.ack();
    assertThat(removed(c.reload(collection()))).containsExactly(MINE + "svc/a");
  }

  @ParameterizedTest
  @EnumSource(value = Variant.class, names = {"SOTW_ADS", "SOTW_PER_TYPE"})
  void sotwRequestForAGlobCollectionEndsTheStreamAsTp1DefinesGlobsForDeltaOnly(Variant v) {
    Client c = new Client(v, ResourceType.ENDPOINT, collection("svc/a"));
    Outcome.Close close = closed(c.ask(GLOB));
    assertThat(close).isNotNull();
    assertThat(close.code()).isEqualTo(Outcome.CloseCode.INVALID_ARGUMENT);
    assertThat(close.message()).contains(GLOB, "Incremental");
  }

  // --- TP3: resource_errors ---

  @ParameterizedTest
  @EnumSource(Variant.class)
  void requestedNameThatDoesNotExistIsReportedAsNotFoundOnceUntilThatChanges(Variant v) {
    Client c = new Client(v, ResourceType.ENDPOINT, config(cla("here")));
    List<Outcome> out = c.ask("here", "missing");
    assertThat(sent(out)).containsExactly("here");
    assertThat(errors(out)).containsExactly(Map.entry("missing", NOT_FOUND));
    assertThat(errorList(out).get(0).getErrorDetail().getMessage())
        .isEqualTo("EDS resource 'missing' does not exist");
    // Said once: an ACK, the same request again, or an unrelated change say nothing more.
    assertThat(errors(c.ack())).isEmpty();
    assertThat(errors(c.reload(config(cla("here"), cla("elsewhere"))))).isEmpty();
    c.ack();
    // It comes to exist: sent; it goes again: said again.
    assertThat(sent(c.reload(config(cla("here"), cla("missing"))))).containsExactly("missing");
    c.ack();
    out = c.reload(config(cla("here")));
    assertThat(errors(out)).containsExactly(Map.entry("missing", NOT_FOUND));
    if (c.delta()) {
      assertThat(removed(out)).containsExactly("missing");
    }
  }

  @ParameterizedTest
  @EnumSource(value = Variant.class, names = {"SOTW_ADS", "SOTW_PER_TYPE"})
  void sotwReconnectAtTheSameVersionIsNotToldTheErrorsAgain(Variant v) {
    // The version covers the names asked for, so the client was told then (and a REST-JSON
    // poll, a reconnect each time, is not answered with the same error on every poll).
    for (ResourceType type : List.of(ResourceType.ENDPOINT, ResourceType.CLUSTER)) {
      XdsResource here = type == ResourceType.CLUSTER ? Fixtures.cluster("here") : cla("here");
      Client first = new Client(v, type, config(here));
      List<Outcome> out = first.ask("here", "missing");
      assertThat(errors(out)).containsOnlyKeys("missing");
      String version =
          ((DiscoveryResponse) ((Outcome.Send) out.get(0)).response()).getVersionInfo();
      Client again = new Client(v, type, config(here));
      assertThat(again.resume(version, "here", "missing"))
          .noneMatch(o -> o instanceof Outcome.Send);
    }
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void fullStateTypeReportsAMissingNameWithTheStateItSends(Variant v) {
    Client c = new Client(v, ResourceType.CLUSTER, config(Fixtures.cluster("a")));
    List<Outcome> out = c.ask("a", "b");
    assertThat(sent(out)).containsExactly("a");
    assertThat(errors(out)).containsExactly(Map.entry("b", NOT_FOUND));
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void nameAskedForAgainAfterBeingDroppedIsReportedAgain(Variant v) {
    Client c = new Client(v, ResourceType.ENDPOINT, config(cla("here")));
    c.ask("here", "missing");
    c.ack();
    c.drop("missing");
    c.ack();
    assertThat(errors(c.ask("missing"))).containsExactly(Map.entry("missing", NOT_FOUND));
  }
}
