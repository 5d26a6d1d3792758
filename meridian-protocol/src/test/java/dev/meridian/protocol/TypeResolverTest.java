package dev.meridian.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 18 ("A 20-second start"): a config's {@code Any} types are found one by one, and the
 * scan of all of Envoy's API runs only for a type its Java package conventions do not find.
 */
class TypeResolverTest {
  private static final String HCM = "type.googleapis.com/envoy.extensions.filters.network"
      + ".http_connection_manager.v3.HttpConnectionManager";
  private static final String ROUTER =
      "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router";
  private static final String LISTENER = """
      {"name": "http", "filter_chains": [{"filters": [{"name": "hcm", "typed_config": {
        "@type": "%s", "stat_prefix": "in",
        "http_filters": [{"name": "router", "typed_config": {"@type": "%s"}}]}}]}]}
      """;

  private int scans;
  private final TypeResolver resolver = new TypeResolver(() -> {
    scans++;
    return EnvoyTypeRegistry.get();
  });

  @Test
  void theTypesAConfigNamesAreFoundWithoutScanningTheWholeApi() throws Exception {
    JsonFormat.Parser p = resolver.parserFor(List.of(HCM, ROUTER,
        "type.googleapis.com/xds.type.v3.TypedStruct", "type.googleapis.com/udpa.type.v1.TypedStruct",
        "type.googleapis.com/google.protobuf.Duration",
        "envoy.config.cluster.v3.Cluster.EdsClusterConfig"));

    Listener.Builder b = Listener.newBuilder();
    p.merge(LISTENER.formatted(HCM, ROUTER), b);
    HttpConnectionManager hcm = b.getFilterChains(0).getFilters(0).getTypedConfig()
        .unpack(HttpConnectionManager.class);
    assertThat(hcm.getHttpFilters(0).getTypedConfig().getTypeUrl()).isEqualTo(ROUTER);
    // A type of a file asked for comes with it (the builder adds whole files).
    Cluster.Builder c = Cluster.newBuilder();
    p.merge("{\"typed_extension_protocol_options\": {\"x\": {\"@type\": "
        + "\"type.googleapis.com/envoy.config.cluster.v3.Cluster.EdsClusterConfig\"}}}", c);
    assertThat(scans).isZero();
  }

  @Test
  void aTypeOutsideTheConventionsIsFoundByTheFullScan() throws Exception {
    // protoc-gen-validate's messages are inner classes of one outer class, Validate.
    String rules = "type.googleapis.com/validate.FieldRules";
    JsonFormat.Parser p = resolver.parserFor(List.of(rules));

    Cluster.Builder c = Cluster.newBuilder();
    p.merge("{\"typed_extension_protocol_options\": {\"x\": {\"@type\": \"" + rules + "\"}}}", c);
    assertThat(c.getTypedExtensionProtocolOptionsMap().get("x").getTypeUrl()).isEqualTo(rules);
    assertThat(scans).isEqualTo(1);
  }

  @Test
  void anUnknownTypeFailsAsItDoesWithEveryTypeKnownAndIsLookedUpOnce() {
    String json = LISTENER.formatted("type.googleapis.com/no.such.v3.Filter", ROUTER);
    String withEveryType = messageOf(() -> EnvoyTypeRegistry.get().parser()
        .merge(json, Listener.newBuilder()));

    JsonFormat.Parser p = resolver.parserFor(List.of("type.googleapis.com/no.such.v3.Filter"));
    assertThatThrownBy(() -> p.merge(json, Listener.newBuilder()))
        .isInstanceOf(InvalidProtocolBufferException.class).hasMessage(withEveryType);
    resolver.parserFor(List.of("type.googleapis.com/no.such.v3.Filter"));
    assertThat(scans).isEqualTo(1);
  }

  @Test
  void aWrongGuessIsNeverTaken() {
    assertThat(TypeResolver.byConvention("envoy.config.cluster.v3.Cluster").getFullName())
        .isEqualTo("envoy.config.cluster.v3.Cluster");
    // Classes that exist where the conventions look, but are not the message named: the Java
    // name is not the proto name; a file's outer class; an interface.
    assertThat(TypeResolver.byConvention("io.envoyproxy.envoy.config.cluster.v3.Cluster")).isNull();
    assertThat(TypeResolver.byConvention("envoy.config.cluster.v3.ClusterProto")).isNull();
    assertThat(TypeResolver.byConvention("envoy.config.cluster.v3.ClusterOrBuilder")).isNull();
    assertThat(TypeResolver.byConvention("nopackage")).isNull();
  }

  private interface Parse {
    void run() throws Exception;
  }

  private static String messageOf(Parse p) {
    try {
      p.run();
    } catch (Exception e) {
      return e.getMessage();
    }
    throw new AssertionError("expected a failure");
  }
}
