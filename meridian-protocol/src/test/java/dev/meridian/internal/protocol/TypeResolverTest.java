package dev.meridian.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;

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
  private int scans;
  private final TypeResolver resolver = new TypeResolver(() -> {
    scans++;
    return EnvoyTypeRegistry.get();
  });

  @Test
  void theTypesAConfigNamesAreFoundWithoutScanningTheWholeApi() {
    for (String name : List.of(HCM, ROUTER, "type.googleapis.com/xds.type.v3.TypedStruct",
        "type.googleapis.com/udpa.type.v1.TypedStruct", "type.googleapis.com/google.protobuf.Duration",
        "envoy.config.cluster.v3.Cluster.EdsClusterConfig")) {
      String fullName = name.substring(name.lastIndexOf('/') + 1);
      assertThat(resolver.find(fullName).getFullName()).isEqualTo(fullName);
    }
    assertThat(resolver.find(HttpConnectionManager.getDescriptor().getFullName()))
        .isSameAs(HttpConnectionManager.getDescriptor());
    assertThat(scans).isZero();
  }

  @Test
  void aTypeOutsideTheConventionsIsFoundByTheFullScan() {
    // protoc-gen-validate's messages are inner classes of one outer class, Validate.
    assertThat(resolver.find("validate.FieldRules").getFullName()).isEqualTo("validate.FieldRules");
    assertThat(scans).isEqualTo(1);
  }

  @Test
  void anUnknownTypeIsNotFoundAndIsLookedUpOnce() {
    assertThat(resolver.find("no.such.v3.Filter")).isNull();
    assertThat(resolver.find("no.such.v3.Filter")).isNull();
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
}
