package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsCertificate;
import io.envoyproxy.envoy.config.core.v3.DataSource;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 20's rules in the core, on every variant that serves Secrets: a node id is a claim and a
 * verified identity is proof (a claim of a group that requires an identity it lacks is refused
 * with PERMISSION_DENIED, never placed elsewhere); a Secret goes only to a stream whose identity
 * may have it, and for any other stream it does not exist (SotW: not sent; Delta: removed).
 */
class TrustRulesTest {
  private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
  private static final String PAYMENTS = "spiffe://example.org/ns/payments/sa/api";
  private static final String ORDERS = "spiffe://example.org/ns/orders/sa/api";

  enum Variant { SOTW_ADS, SOTW_PER_TYPE, DELTA_ADS, DELTA_PER_TYPE }

  /** One client on one stream of the variant, asking for Secrets. */
  static final class Client extends VariantClient {
    final Variant variant;
    private final String nodeId;
    private boolean sentNode;
    private String[] lastNames = new String[0];

    Client(Variant variant, String nodeId, String identity, boolean plaintextSecrets,
        ServedConfig config) {
      super(switch (variant) {
        case SOTW_ADS -> TwinStream.sotwAds(CLOCK);
        case SOTW_PER_TYPE -> TwinStream.sotwPerType(ResourceType.SECRET, CLOCK);
        case DELTA_ADS -> TwinStream.deltaAds(CLOCK);
        case DELTA_PER_TYPE -> TwinStream.deltaPerType(ResourceType.SECRET, CLOCK);
      }, config);
      this.variant = variant;
      this.nodeId = nodeId;
      twin.withIdentity(identity, plaintextSecrets);
    }

    boolean delta() {
      return variant == Variant.DELTA_ADS || variant == Variant.DELTA_PER_TYPE;
    }

    /** Asks for Secrets by name (none: every Secret); on SotW the names replace the last ones. */
    @SuppressWarnings("unchecked")
    List<Outcome> ask(String... names) {
      lastNames = names;
      Node node = Node.newBuilder().setId(nodeId).build();
      List<Outcome> out;
      if (delta()) {
        DeltaDiscoveryRequest.Builder b = DeltaDiscoveryRequest.newBuilder()
            .setTypeUrl(ResourceType.SECRET.typeUrl()).addAllResourceNamesSubscribe(Arrays.asList(names));
        if (!sentNode) {
          b.setNode(node);
        }
        out = ((TwinStream<DeltaDiscoveryRequest>) twin).onRequest(b.build(), config);
      } else {
        DiscoveryRequest.Builder b = DiscoveryRequest.newBuilder().setResponseNonce(lastNonce)
            .setTypeUrl(ResourceType.SECRET.typeUrl()).addAllResourceNames(Arrays.asList(names));
        if (!sentNode) {
          b.setNode(node);
        }
        out = ((TwinStream<DiscoveryRequest>) twin).onRequest(b.build(), config);
      }
      sentNode = true;
      remember(out);
      return out;
    }

    /** ACKs the last response (Delta) so the next one may come. */
    @SuppressWarnings("unchecked")
    List<Outcome> ack() {
      if (delta()) {
        List<Outcome> out = ((TwinStream<DeltaDiscoveryRequest>) twin).onRequest(
            DeltaDiscoveryRequest.newBuilder().setTypeUrl(ResourceType.SECRET.typeUrl())
                .setResponseNonce(lastNonce).build(), config);
        remember(out);
        return out;
      }
      return ask(namesOfLastAsk());
    }

    private String[] namesOfLastAsk() {
      return lastNames;
    }

  }

  static XdsResource secret(String name) {
    return XdsResource.of(ResourceType.SECRET, Secret.newBuilder().setName(name)
        .setTlsCertificate(TlsCertificate.newBuilder()
            .setPrivateKey(DataSource.newBuilder().setInlineString("key of " + name))).build());
  }

  /** payments-* nodes must prove a payments identity; the default group has two Secrets. */
  static ServedConfig config(SecretAccess access, XdsResource... defaults) {
    ServedConfig.Group payments = new ServedConfig.Group("payments",
        new NodeMatcher("payments-*", null, "spiffe://example.org/ns/payments/*"),
        Snapshot.of(List.of(secret("payments-cert"))));
    return new ServedConfig(Snapshot.of(Arrays.asList(defaults)), List.of(payments), access);
  }

  static ServedConfig config(XdsResource... defaults) {
    return config(SecretAccess.NONE, defaults);
  }

  /** The Secret names sent (SotW resources, Delta resources), in order. */
  static List<String> sent(List<Outcome> out) {
    List<String> names = new ArrayList<>();
    for (Outcome o : out) {
      if (o instanceof Outcome.Send s) {
        try {
          if (s.response() instanceof DiscoveryResponse r) {
            for (var any : r.getResourcesList()) {
              names.add(any.unpack(Secret.class).getName());
            }
          } else {
            for (var res : ((DeltaDiscoveryResponse) s.response()).getResourcesList()) {
              names.add(res.getName());
            }
          }
        } catch (InvalidProtocolBufferException e) {
          throw new AssertionError(e);
        }
      }
    }
    return names;
  }

  static List<String> removed(List<Outcome> out) {
    List<String> names = new ArrayList<>();
    for (Outcome o : out) {
      if (o instanceof Outcome.Send s && s.response() instanceof DeltaDiscoveryResponse r) {
        names.addAll(r.getRemovedResourcesList());
      }
    }
    return names;
  }

  static Outcome.Close closed(List<Outcome> out) {
    return out.stream().filter(o -> o instanceof Outcome.Close).map(o -> (Outcome.Close) o)
        .findFirst().orElse(null);
  }

  static List<Outcome.Withheld> withheld(List<Outcome> out) {
    return out.stream().filter(o -> o instanceof Outcome.Withheld).map(o -> (Outcome.Withheld) o)
        .toList();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void nodeIdOfAGroupClaimedWithAnotherIdentityIsDeniedNamingBoth(Variant v) {
    Client c = new Client(v, "payments-1", ORDERS, false, config());
    Outcome.Close close = closed(c.ask());
    assertThat(close).isNotNull();
    assertThat(close.code()).isEqualTo(Outcome.CloseCode.PERMISSION_DENIED);
    assertThat(close.message()).contains("payments-1", ORDERS, "payments");
    assertThat(sent(c.ask())).isEmpty(); // closed: nothing more
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void nodeIdOfAGroupClaimedWithoutIdentityIsDenied(Variant v) {
    Client c = new Client(v, "payments-1", null, true, config());
    Outcome.Close close = closed(c.ask());
    assertThat(close.code()).isEqualTo(Outcome.CloseCode.PERMISSION_DENIED);
    assertThat(close.message()).contains("payments-1", "no verified client certificate");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void allowedIdentityIsPlacedInItsGroupAndGetsItsSecrets(Variant v) {
    Client c = new Client(v, "payments-1", PAYMENTS, false, config(secret("shared")));
    assertThat(sent(c.ask())).containsExactly("payments-cert");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void groupMatchedByIdentityAloneIsNotAClaim(Variant v) {
    ServedConfig byIdentity = new ServedConfig(Snapshot.of(List.of(secret("shared"))),
        List.of(new ServedConfig.Group("payments", new NodeMatcher(null, null,
            "spiffe://example.org/ns/payments/*"), Snapshot.of(List.of(secret("payments-cert"))))),
        SecretAccess.NONE);
    assertThat(sent(new Client(v, "any", PAYMENTS, false, byIdentity).ask()))
        .containsExactly("payments-cert");
    assertThat(sent(new Client(v, "any", ORDERS, false, byIdentity).ask()))
        .containsExactly("shared");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void streamWithoutIdentityGetsNoSecretsAndIsToldOfEachOnce(Variant v) {
    Client c = new Client(v, "dev-1", null, false, config(secret("shared")));
    List<Outcome> out = c.ask("shared");
    assertThat(sent(out)).isEmpty();
    assertThat(withheld(out)).extracting(Outcome.Withheld::name).containsExactly("shared");
    assertThat(withheld(out).get(0).reason()).contains("no verified identity");
    if (c.delta()) {
      // Spec "Knowing When a Requested Resource Does Not Exist": it does not, for this stream.
      assertThat(removed(out)).containsExactly("shared");
    }
    assertThat(withheld(c.ask("shared"))).isEmpty(); // reported once
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void plaintextSecretsOptInGivesStreamsWithoutIdentityTheirGroupsSecrets(Variant v) {
    Client c = new Client(v, "dev-1", null, true, config(secret("shared")));
    assertThat(sent(c.ask())).containsExactly("shared");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void secretRequestedByNameByTheWrongIdentityIsWithheld(Variant v) {
    SecretAccess access = new SecretAccess(List.of(
        new SecretAccess.Rule("orders-*", List.of("spiffe://example.org/ns/orders/*"))));
    Client wrong = new Client(v, "web-1", PAYMENTS, false,
        config(access, secret("orders-cert"), secret("shared")));
    List<Outcome> out = wrong.ask("orders-cert", "shared");
    assertThat(sent(out)).containsExactly("shared");
    assertThat(withheld(out)).extracting(Outcome.Withheld::name).containsExactly("orders-cert");
    assertThat(withheld(out).get(0).reason()).contains(PAYMENTS);
    if (wrong.delta()) {
      assertThat(removed(out)).containsExactly("orders-cert");
    }
    Client right = new Client(v, "web-2", ORDERS, false,
        config(access, secret("orders-cert"), secret("shared")));
    assertThat(sent(right.ask("orders-cert"))).containsExactly("orders-cert");
  }

  /** Per-resource errors (TP3 resource_errors) of every response: name → google.rpc.Code. */
  static Map<String, Integer> errors(List<Outcome> out) {
    return FederationRulesTest.errors(out);
  }

  @Test
  void identityGlobsAreTypedAUriGlobTakesOnlyUrisADnsGlobOnlyHostNames() {
    NodeMatcher anyDns = new NodeMatcher(null, null, "*");
    assertThat(anyDns.allowsIdentity("api.example.org")).isTrue();
    assertThat(anyDns.allowsIdentity(PAYMENTS)).isFalse(); // '*' is a DNS glob: never a URI
    assertThat(anyDns.allowsIdentity("*.example.org")).isFalse(); // a wildcard is no host name
    NodeMatcher spiffe = new NodeMatcher(null, null, "spiffe://example.org/*");
    assertThat(spiffe.allowsIdentity(PAYMENTS)).isTrue();
    assertThat(spiffe.allowsIdentity("api.example.org")).isFalse();
    SecretAccess dnsOnly = new SecretAccess(List.of(new SecretAccess.Rule("orders-*",
        List.of("*.example.org"))));
    assertThat(dnsOnly.allows("orders-cert", "orders.example.org", false)).isTrue();
    assertThat(dnsOnly.allows("orders-cert", "spiffe://x/.example.org", false)).isFalse();
    assertThat(Identity.globProblem("spiffe://example.org/*")).isNull();
    assertThat(Identity.globProblem("*.example.org")).isNull();
    assertThat(Identity.globProblem("spiffe:/example.org/*")).contains("neither a URI glob");
    assertThat(Identity.isHostName("a-b.example.org")).isTrue();
    assertThat(Identity.isHostName("-a.example.org")).isFalse();
    assertThat(Identity.isHostName("a..org")).isFalse();
    assertThat(Identity.isHostName("x".repeat(64) + ".org")).isFalse();
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void withheldSecretIsReportedExactlyAsAMissingOneAndLoggedOnce(Variant v) {
    SecretAccess access = new SecretAccess(List.of(
        new SecretAccess.Rule("orders-*", List.of("spiffe://example.org/ns/orders/*"))));
    Client wrong = new Client(v, "web-1", PAYMENTS, false,
        config(access, secret("orders-cert"), secret("shared")));
    List<Outcome> out = wrong.ask("orders-cert", "orders-nope", "shared");
    assertThat(errors(out)).containsOnly(Map.entry("orders-cert", 5), Map.entry("orders-nope", 5));
    List<io.envoyproxy.envoy.service.discovery.v3.ResourceError> said =
        FederationRulesTest.errorList(out);
    // Same code, same words: only the name differs, so the client cannot tell which exists.
    assertThat(said).extracting(e -> e.getErrorDetail().getMessage()
        .replace(e.getResourceName().getName(), "NAME")).containsOnly("SDS resource 'NAME' does not exist");
    if (wrong.delta()) {
      assertThat(removed(out)).containsExactlyInAnyOrder("orders-cert", "orders-nope");
    }
    // The server knows: the refusal is its log line's, once per stream and name.
    assertThat(withheld(out)).extracting(Outcome.Withheld::name).containsExactly("orders-cert");
    assertThat(errors(wrong.ack())).isEmpty();
    assertThat(withheld(wrong.ask("orders-cert", "orders-nope", "shared"))).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(value = Variant.class, names = {"DELTA_ADS", "DELTA_PER_TYPE"})
  void accessTakenAwayByAReloadRemovesTheSecretFromADeltaClient(Variant v) {
    Client c = new Client(v, "web-1", ORDERS, false, config(secret("orders-cert")));
    assertThat(sent(c.ask("orders-cert"))).containsExactly("orders-cert");
    c.ack();
    SecretAccess onlyPayments = new SecretAccess(List.of(
        new SecretAccess.Rule("orders-*", List.of("spiffe://example.org/ns/payments/*"))));
    List<Outcome> out = c.reload(config(onlyPayments, secret("orders-cert")));
    assertThat(removed(out)).containsExactly("orders-cert");
    assertThat(withheld(out)).extracting(Outcome.Withheld::name).containsExactly("orders-cert");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void reloadThatMakesAConnectedClaimUnprovenClosesTheStream(Variant v) {
    ServedConfig open = new ServedConfig(Snapshot.of(List.of(secret("shared"))),
        List.of(new ServedConfig.Group("payments", new NodeMatcher("payments-*", null),
            Snapshot.of(List.of(secret("payments-cert"))))), SecretAccess.NONE);
    Client c = new Client(v, "payments-1", ORDERS, false, open);
    assertThat(sent(c.ask())).containsExactly("payments-cert");
    c.ack();
    Outcome.Close close = closed(c.reload(config(secret("shared"))));
    assertThat(close.code()).isEqualTo(Outcome.CloseCode.PERMISSION_DENIED);
  }

  @ParameterizedTest
  @EnumSource(value = Variant.class, names = {"DELTA_ADS", "DELTA_PER_TYPE"})
  void accessChangeFirstSeenThroughARequestStillRemovesTheSecret(Variant v) {
    Client c = new Client(v, "web-1", ORDERS, false, config(secret("orders-cert")));
    assertThat(sent(c.ask("orders-cert"))).containsExactly("orders-cert");
    c.ack();
    c.ask("other"); // a response in flight again, for the ACK below to answer
    // The hub serves the new config before the push reaches this stream; a request comes first.
    c.config = config(new SecretAccess(List.of(new SecretAccess.Rule("orders-*",
        List.of("spiffe://example.org/ns/payments/*")))), secret("orders-cert"));
    List<Outcome> out = c.ack(); // an ACK only: nothing in it asks for the Secret again
    assertThat(removed(out)).containsExactly("orders-cert");
    assertThat(withheld(out)).extracting(Outcome.Withheld::name).containsExactly("orders-cert");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void requestAfterAReloadThatLeavesTheClaimUnprovenClosesTheStream(Variant v) {
    ServedConfig open = new ServedConfig(Snapshot.of(List.of(secret("shared"))),
        List.of(new ServedConfig.Group("payments", new NodeMatcher("payments-*", null),
            Snapshot.of(List.of(secret("payments-cert"))))), SecretAccess.NONE);
    Client c = new Client(v, "payments-1", ORDERS, false, open);
    assertThat(sent(c.ask())).containsExactly("payments-cert");
    c.config = config(secret("shared")); // served before its push reaches the stream
    Outcome.Close close = closed(c.ask());
    assertThat(close.code()).isEqualTo(Outcome.CloseCode.PERMISSION_DENIED);
  }

  /**
   * Issue 21: the Secrets a stream may have are a view of their own, and its versions come from
   * its content alone: a replica that built the same config separately serves a client with the
   * same identity the same versions, so a client moving there with what it holds is sent nothing.
   */
  @ParameterizedTest
  @EnumSource(Variant.class)
  @SuppressWarnings("unchecked")
  void filteredSecretViewHasTheSameVersionsOnAnotherReplicaAndAReconnectGetsNothing(Variant v) {
    java.util.function.Supplier<ServedConfig> build = () -> config(new SecretAccess(List.of(
        new SecretAccess.Rule("payments-*", List.of(PAYMENTS)))),
        secret("orders-cert"), secret("payments-key"));
    Client first = new Client(v, "orders-1", ORDERS, false, build.get());
    List<Outcome> out = first.ask();
    assertThat(sent(out)).containsExactly("orders-cert"); // payments-key is withheld
    Client moved = new Client(v, "orders-1", ORDERS, false, build.get()); // another replica
    Node node = Node.newBuilder().setId("orders-1").build();
    Outcome.Send send = (Outcome.Send) out.stream().filter(o -> o instanceof Outcome.Send)
        .findFirst().orElseThrow();
    List<Outcome> again;
    if (first.delta()) {
      DeltaDiscoveryResponse r = (DeltaDiscoveryResponse) send.response();
      DeltaDiscoveryRequest.Builder resume = DeltaDiscoveryRequest.newBuilder().setNode(node)
          .setTypeUrl(ResourceType.SECRET.typeUrl());
      r.getResourcesList().forEach(res -> resume.putInitialResourceVersions(res.getName(),
          res.getVersion()));
      again = ((TwinStream<DeltaDiscoveryRequest>) moved.twin).onRequest(resume.build(),
          moved.config);
    } else {
      DiscoveryResponse r = (DiscoveryResponse) send.response();
      // A fresh client there is sent the same view at the same version_info...
      Outcome.Send fresh = (Outcome.Send) moved.ask().stream()
          .filter(o -> o instanceof Outcome.Send).findFirst().orElseThrow();
      assertThat(((DiscoveryResponse) fresh.response()).getVersionInfo())
          .isEqualTo(r.getVersionInfo());
      // ...so one that resumes at that version_info is sent nothing.
      Client third = new Client(v, "orders-1", ORDERS, false, build.get());
      again = ((TwinStream<DiscoveryRequest>) third.twin).onRequest(DiscoveryRequest.newBuilder()
          .setNode(node).setTypeUrl(ResourceType.SECRET.typeUrl())
          .setVersionInfo(r.getVersionInfo()).build(), third.config);
    }
    assertThat(again).noneMatch(o -> o instanceof Outcome.Send);
  }
}
