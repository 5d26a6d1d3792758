package dev.meridian.internal.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.Gson;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.Message;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.XdsResource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * The loader reads resources with its own walker ({@link MessageReader}) instead of protobuf's
 * JsonFormat, to resolve YAML scalars by field type and to locate errors (issue 18). For every valid
 * proto3 JSON resource both must build the very same message, byte for byte, so that versions (a
 * hash of the serialization) do not move: JsonFormat is the oracle here.
 */
class Proto3JsonAgreementTest {
  @TempDir Path dir;

  /** Resources that touch every kind of field and every well-known type JsonFormat special-cases. */
  static final List<String> RESOURCES = List.of("""
      {"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", "name": "c1",
       "type": "EDS", "connectTimeout": "2.5s", "lb_policy": 2, "respect_dns_ttl": true,
       "per_connection_buffer_limit_bytes": "32768", "dns_lookup_family": "V4_ONLY",
       "ring_hash_lb_config": {"minimum_ring_size": "1024", "maximum_ring_size": 1e6},
       "circuit_breakers": {"thresholds": [{"priority": "HIGH", "max_connections": 100},
                                          {"priority": 0, "max_requests": 5.0}]},
       "common_lb_config": {"healthy_panic_threshold": {"value": 50.5}},
       "outlier_detection": {"consecutive_5xx": 5, "interval": "0.000000001s"},
       "load_balancing_policy": null,
       "metadata": {"filter_metadata": {"x": {"n": -1.5e3, "s": "line\\nbreak \\"q\\" \\u00e9",
         "z": 0, "b": false, "l": [1, "a", null, {"k": true}], "nul": null, "big": 12345678901234567890}}},
       "typed_extension_protocol_options": {"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
         "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
         "explicit_http_config": {"http2_protocol_options": {"max_concurrent_streams": 100}}}},
       "load_assignment": {"cluster_name": "c1", "endpoints": [{"locality": {"region": "r"},
         "load_balancing_weight": 3, "lb_endpoints": [{"endpoint": {"address": {"socket_address":
         {"address": "10.0.0.1", "port_value": 8e1}}}, "health_status": "HEALTHY"}]}]}}
      """, """
      {"@type": "type.googleapis.com/envoy.config.listener.v3.Listener", "name": "l1",
       "address": {"socket_address": {"address": "0.0.0.0", "port_value": 10000}},
       "socket_options": [{"level": "1", "name": 2, "int_value": "-3", "state": "STATE_BOUND"},
                          {"level": 1, "name": 3, "buf_value": "YWJj"}],
       "listener_filters_timeout": "1.5s",
       "filter_chains": [{"filter_chain_match": {"destination_port": 443, "server_names": ["a", "b"]},
         "filters": [{"name": "hcm", "typed_config": {
           "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
           "stat_prefix": "ingress", "codec_type": "AUTO",
           "common_http_protocol_options": {"idle_timeout": "3600s"},
           "route_config": {"name": "inline", "virtual_hosts": [{"name": "v", "domains": ["*"],
             "routes": [{"match": {"prefix": "/", "headers": [{"name": "x", "exact_match": "y"}]},
               "route": {"weighted_clusters": {"clusters": [{"name": "a", "weight": 80},
                 {"name": "b", "weight": 20}]}, "timeout": "0s",
                 "retry_policy": {"retry_on": "5xx", "num_retries": 3}},
               "typed_per_filter_config": {"envoy.filters.http.router": {
                 "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}}}]}]},
           "http_filters": [{"name": "router", "typed_config": {
             "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router",
             "suppress_envoy_headers": true}}]}}]}]}
      """, """
      {"@type": "type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig", "name": "duration",
       "typed_config": {"@type": "type.googleapis.com/google.protobuf.Duration", "value": "-1.5s"}}
      """, """
      {"@type": "type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig", "name": "timestamp",
       "typed_config": {"@type": "type.googleapis.com/google.protobuf.Timestamp",
                        "value": "2026-01-01T10:00:00.5+01:00"}}
      """, """
      {"@type": "type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig", "name": "mask",
       "typed_config": {"@type": "type.googleapis.com/google.protobuf.FieldMask", "value": "a.bC,d"}}
      """, """
      {"@type": "type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig", "name": "struct",
       "typed_config": {"@type": "type.googleapis.com/google.protobuf.Struct",
                        "value": {"a": 1, "b": [true, null, "s"]}}}
      """, """
      {"@type": "type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig", "name": "value",
       "typed_config": {"@type": "type.googleapis.com/google.protobuf.Value", "value": [1, {"x": "y"}]}}
      """, """
      {"@type": "type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig", "name": "list",
       "typed_config": {"@type": "type.googleapis.com/google.protobuf.ListValue", "value": [1, "two"]}}
      """, """
      {"@type": "type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig", "name": "any",
       "typed_config": {"@type": "type.googleapis.com/google.protobuf.Any",
                        "value": {"@type": "type.googleapis.com/google.protobuf.UInt64Value",
                                  "value": "18446744073709551615"}}}
      """, """
      {"@type": "type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig", "name": "empty",
       "typed_config": {}}
      """, """
      {"@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret", "name": "s1",
       "generic_secret": {"secret": {"inline_bytes": "aGVsbG8="}}}
      """, """
      {"@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret", "name": "s2",
       "generic_secret": {"secret": {"inline_bytes": "_-8"}}}
      """, """
      {"@type": "type.googleapis.com/envoy.service.runtime.v3.Runtime", "name": "rt",
       "layer": {"a": {"b": [1.25, -0, 1E+2]}, "c": "d"}}
      """, """
      {"@type": "type.googleapis.com/envoy.config.route.v3.RouteConfiguration", "name": "r1",
       "max_direct_response_body_size_bytes": 4096,
       "virtual_hosts": [{"name": "v", "domains": ["example.com"],
         "request_headers_to_add": [{"header": {"key": "k", "value": "v"}, "append_action": 1}],
         "routes": [{"match": {"safe_regex": {"regex": "^/a.*"}}, "direct_response":
           {"status": 200, "body": {"inline_string": "ok"}}}]}]}
      """);

  @Test
  void everyJsonResourceReadsExactlyAsJsonFormatReadsIt() throws Exception {
    Path file = dir.resolve("all.json");
    Files.writeString(file, "{\"resources\": [\n" + String.join(",\n", RESOURCES) + "]}\n");
    ServedConfig loaded = new ConfigLoader().load(file).config();
    for (String json : RESOURCES) {
      assertSameAsJsonFormat(JsonParser.parseString(json).getAsJsonObject(), loaded);
    }
  }

  @Test
  void theBundledExamplesReadAsProto3JsonReadsThem() throws Exception {
    // The examples have no scalar that YAML 1.1 and 1.2 read apart, so JsonFormat over the
    // YAML's JSON form is their meaning.
    for (Path example : List.of(Path.of("..", "examples", "quickstart.yaml"),
        Path.of("..", "examples", "proxyless-grpc", "meridian.yaml"))) {
      ServedConfig loaded = new ConfigLoader().load(example).config();
      Object tree = new Load(LoadSettings.builder().setSchema(new CoreSchema()).build())
          .loadFromString(Files.readString(example));
      JsonObject root = new Gson().toJsonTree(tree).getAsJsonObject();
      int count = 0;
      for (JsonElement r : root.getAsJsonArray("resources")) {
        assertSameAsJsonFormat(r.getAsJsonObject(), loaded);
        count++;
      }
      assertThat(count).as(example.toString()).isPositive();
      if (root.has("groups")) {
        for (JsonElement g : root.getAsJsonArray("groups")) {
          String group = g.getAsJsonObject().get("name").getAsString();
          for (JsonElement r : g.getAsJsonObject().getAsJsonArray("resources")) {
            assertSameAsJsonFormat(r.getAsJsonObject(), new ServedConfig(
                loaded.snapshot(group), List.of()));
          }
        }
      }
    }
  }

  private static void assertSameAsJsonFormat(JsonObject json, ServedConfig loaded)
      throws Exception {
    String typeUrl = json.get("@type").getAsString();
    ResourceType type = ResourceType.fromTypeUrl(typeUrl).orElseThrow();
    JsonObject fields = json.deepCopy();
    fields.remove("@type");
    Message.Builder b = type.defaultInstance().newBuilderForType();
    EnvoyTypeRegistry.get().parser().merge(fields.toString(), b);
    Message expected = b.build();
    XdsResource r = loaded.defaults().get(type).get(type.nameOf(expected));
    assertThat(r).as(typeUrl + " " + type.nameOf(expected)).isNotNull();
    assertThat(r.message()).isEqualTo(expected);
    assertThat(r.message().toByteString()).as(type.nameOf(expected) + " bytes")
        .isEqualTo(expected.toByteString());
  }
}
