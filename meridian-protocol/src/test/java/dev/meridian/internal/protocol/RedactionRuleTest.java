package dev.meridian.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.DataSource;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.http.basic_auth.v3.BasicAuth;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.filters.network.redis_proxy.v3.RedisProtocolOptions;
import io.envoyproxy.envoy.extensions.filters.network.redis_proxy.v3.RedisProxy;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The redaction rules hold for every message type of the Envoy API on the classpath: a new Envoy
 * release that adds a field named like a secret, or a DataSource, gets it redacted, and this test
 * shows the walk reaches it.
 */
class RedactionRuleTest {
  private static final String CANARY = "CANARY-7f3a";

  @Test
  void everyFieldOfTheApiThatNamesASecretLosesItsValueWhereverItIs() {
    List<String> leaked = new ArrayList<>();
    int checked = 0;
    for (Descriptor d : envoyTypes()) {
      for (FieldDescriptor f : d.getFields()) {
        if (!Redaction.matchesRule(f.getName()) || !Redaction.canHoldSecret(f)
            || excepted(f)) {
          continue;
        }
        assertThat(Redaction.isSecret(f)).as(f.getFullName()).isTrue();
        checked++;
        if (leaks(d, f, filled(f))) {
          leaked.add(f.getFullName());
        }
      }
    }
    assertThat(leaked).isEmpty();
    assertThat(checked).as("secret-named fields in the API").isGreaterThan(50);
  }

  @Test
  void everyDataSourceOfTheApiLosesItsInlineContent() {
    List<String> leaked = new ArrayList<>();
    int checked = 0;
    for (Descriptor d : envoyTypes()) {
      for (FieldDescriptor f : d.getFields()) {
        FieldDescriptor v0 = f.isMapField() ? f.getMessageType().findFieldByNumber(2) : f;
        if (v0.getJavaType() != FieldDescriptor.JavaType.MESSAGE
            || !v0.getMessageType().getName().equals("DataSource")) {
          continue;
        }
        checked++;
        Message.Builder ds = DynamicMessage.newBuilder(v0.getMessageType());
        ds.setField(v0.getMessageType().findFieldByName("inline_string"), CANARY);
        Object v = f.isMapField() ? entry(f, ds.build()) : ds.build();
        if (leaks(d, f, v)) {
          leaked.add(f.getFullName());
        }
      }
    }
    assertThat(leaked).isEmpty();
    assertThat(checked).as("DataSource fields in the API").isGreaterThan(50);
  }

  @Test
  void everyExceptionNamesAFieldOfTheApiThatTheRuleWouldTake() {
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (Descriptor d : EnvoyTypeRegistry.get().descriptors()) {
      for (FieldDescriptor f : d.getFields()) {
        if (Redaction.matchesRule(f.getName()) && Redaction.canHoldSecret(f)) {
          seen.add(f.getName());
          seen.add(f.getFullName());
        }
      }
    }
    TreeSet<String> stale = new TreeSet<>(Redaction.NOT_SECRET.keySet());
    stale.removeAll(seen);
    assertThat(stale).as("exceptions that name no field the rule takes").isEmpty();
  }

  @Test
  void theProbesLeaksAreRedactedAndTheNamesAroundThemKept() throws Exception {
    Cluster redis = Cluster.newBuilder().setName("redis")
        .putTypedExtensionProtocolOptions("envoy.filters.network.redis_proxy",
            Any.pack(RedisProtocolOptions.newBuilder()
                .setAuthPassword(DataSource.newBuilder().setInlineString("REDIS PASSWORD"))
                .setAuthUsername(DataSource.newBuilder().setFilename("/etc/redis/user"))
                .build()))
        .setMetadata(Metadata.newBuilder().putFilterMetadata("app", Struct.newBuilder()
            .putFields("db_password", Value.newBuilder().setStringValue("META SECRET").build())
            .putFields("owner", Value.newBuilder().setStringValue("team-a").build()).build()))
        .build();
    String json = print(Redaction.redact(redis));
    assertThat(json).doesNotContain("REDIS PASSWORD", "META SECRET")
        .contains(Redaction.REDACTED, "/etc/redis/user", "team-a", "db_password");

    RedisProxy proxy = RedisProxy.newBuilder().setStatPrefix("redis")
        .addDownstreamAuthPasswords(DataSource.newBuilder().setInlineString("DOWNSTREAM ONE"))
        .addDownstreamAuthPasswords(DataSource.newBuilder()
            .setInlineBytes(ByteString.copyFromUtf8("DOWNSTREAM TWO")))
        .build();
    BasicAuth basic = BasicAuth.newBuilder()
        .setUsers(DataSource.newBuilder().setInlineString("admin:{SHA}HTPASSWD HASH")).build();
    Listener l = Listener.newBuilder().setName("edge").addFilterChains(FilterChain.newBuilder()
        .addFilters(Filter.newBuilder().setName("redis").setTypedConfig(Any.pack(proxy)))
        .addFilters(Filter.newBuilder().setName("hcm").setTypedConfig(Any.pack(
            HttpConnectionManager.newBuilder().setStatPrefix("http").addHttpFilters(HttpFilter
                .newBuilder().setName("basic").setTypedConfig(Any.pack(basic))).build()))))
        .build();
    json = print(Redaction.redact(l));
    assertThat(json).doesNotContain("DOWNSTREAM ONE", "HTPASSWD HASH")
        .doesNotContain(ByteString.copyFromUtf8("DOWNSTREAM TWO").toStringUtf8(),
            java.util.Base64.getEncoder().encodeToString("DOWNSTREAM TWO".getBytes()))
        .contains("edge", "basic", Redaction.REDACTED);

    RouteConfiguration rc = RouteConfiguration.newBuilder().setName("r")
        .addVirtualHosts(VirtualHost.newBuilder().setName("v").addDomains("*")
            .addRequestHeadersToAdd(header("authorization", "Bearer eyJ.TOKEN"))
            .addRequestHeadersToAdd(header("x-upstream", "bearer LOWER TOKEN"))
            .addRequestHeadersToAdd(header("x-api-key", "API KEY VALUE"))
            .addRequestHeadersToAdd(header("x-env", "production")))
        .build();
    json = print(Redaction.redact(rc));
    assertThat(json).doesNotContain("eyJ.TOKEN", "LOWER TOKEN", "API KEY VALUE")
        .contains("authorization", "x-upstream", "x-api-key", "production");
  }

  @Test
  void aResourceWithoutSecretsIsTheSameMessage() {
    Cluster c = Cluster.newBuilder().setName("plain")
        .setLbSubsetConfig(Cluster.LbSubsetConfig.newBuilder().addSubsetSelectors(
            Cluster.LbSubsetConfig.LbSubsetSelector.newBuilder().addKeys("version")))
        .setTransportSocket(io.envoyproxy.envoy.config.core.v3.TransportSocket.newBuilder()
            .setName("tls").setTypedConfig(Any.pack(io.envoyproxy.envoy.extensions
                .transport_sockets.tls.v3.UpstreamTlsContext.newBuilder().setCommonTlsContext(
                    io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CommonTlsContext
                        .newBuilder().addTlsCertificates(io.envoyproxy.envoy.extensions
                            .transport_sockets.tls.v3.TlsCertificate.newBuilder()
                            .setCertificateChain(DataSource.newBuilder().setFilename("/c.pem"))))
                .build())))
        .build();
    assertThat(Redaction.redact(c)).isSameAs(c);
  }

  private static HeaderValueOption header(String name, String value) {
    return HeaderValueOption.newBuilder()
        .setHeader(HeaderValue.newBuilder().setKey(name).setValue(value)).build();
  }

  private static String print(Message m) throws Exception {
    return EnvoyTypeRegistry.get().printer().print(m);
  }

  /** Envoy's, and what its configs embed (xds, udpa, CEL, OpenTelemetry, google.*). */
  private static List<Descriptor> envoyTypes() {
    List<Descriptor> all = List.copyOf(EnvoyTypeRegistry.get().descriptors());
    assertThat(all.stream().filter(d -> d.getFullName().startsWith("envoy.")).count())
        .as("Envoy's message types on the classpath").isGreaterThan(1000);
    return all;
  }

  private static boolean excepted(FieldDescriptor f) {
    return Redaction.NOT_SECRET.containsKey(f.getName())
        || Redaction.NOT_SECRET.containsKey(f.getFullName());
  }

  /** Whether {@code value} set as {@code f} of a {@code d} survives redaction anywhere in it. */
  private static boolean leaks(Descriptor d, FieldDescriptor f, Object value) {
    DynamicMessage.Builder b = DynamicMessage.newBuilder(d);
    if (f.isRepeated()) {
      b.addRepeatedField(f, value);
    } else {
      b.setField(f, value);
    }
    DynamicMessage m = b.build();
    if (!m.toByteString().toStringUtf8().contains(CANARY)) {
      return false; // nothing to leak (a message of numbers only)
    }
    // Also inside an Any, as typed_config carries most of the API.
    Message packed = Redaction.redact(Any.newBuilder()
        .setTypeUrl("type.googleapis.com/" + d.getFullName()).setValue(m.toByteString()).build());
    return Redaction.redact(m).toByteString().toStringUtf8().contains(CANARY)
        || packed.toByteString().toStringUtf8().contains(CANARY);
  }

  /** A value for {@code f} with the canary in every string and bytes inside it. */
  private static Object filled(FieldDescriptor f) {
    if (f.isMapField()) {
      Descriptor e = f.getMessageType();
      return entry(f, single(e.findFieldByNumber(2), 0));
    }
    return single(f, 0);
  }

  private static Object single(FieldDescriptor f, int depth) {
    return switch (f.getJavaType()) {
      case STRING -> CANARY;
      case BYTE_STRING -> ByteString.copyFromUtf8(CANARY);
      case MESSAGE -> f.getMessageType().equals(Any.getDescriptor()) ? Any.newBuilder()
          .setTypeUrl("type.googleapis.com/envoy.config.core.v3.HeaderValue")
          .setValue(fill(HeaderValue.getDescriptor(), depth + 1).toByteString()).build()
          : fill(f.getMessageType(), depth + 1);
      case ENUM -> f.getEnumType().getValues().get(0);
      default -> f.getDefaultValue();
    };
  }

  private static Message fill(Descriptor d, int depth) {
    DynamicMessage.Builder b = DynamicMessage.newBuilder(d);
    if (depth > 4) {
      return b.build();
    }
    for (FieldDescriptor f : d.getFields()) {
      if (f.getRealContainingOneof() != null && b.hasOneof(f.getRealContainingOneof())) {
        continue;
      }
      if (f.getJavaType() != FieldDescriptor.JavaType.STRING
          && f.getJavaType() != FieldDescriptor.JavaType.BYTE_STRING
          && f.getJavaType() != FieldDescriptor.JavaType.MESSAGE) {
        continue;
      }
      Object v = f.isMapField() ? entry(f, single(f.getMessageType().findFieldByNumber(2), depth))
          : single(f, depth);
      if (f.isRepeated()) {
        b.addRepeatedField(f, v);
      } else {
        b.setField(f, v);
      }
    }
    return b.build();
  }

  private static Message entry(FieldDescriptor map, Object value) {
    Descriptor e = map.getMessageType();
    FieldDescriptor key = e.findFieldByNumber(1);
    Object k = key.getJavaType() == FieldDescriptor.JavaType.STRING ? "k" : key.getDefaultValue();
    return DynamicMessage.newBuilder(e).setField(key, k).setField(e.findFieldByNumber(2), value)
        .build();
  }
}
