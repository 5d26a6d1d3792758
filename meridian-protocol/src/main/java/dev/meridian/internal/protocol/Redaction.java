package dev.meridian.internal.protocol;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What of a config an operator may see: the one function every view of served or received config
 * goes through ({@code /config_dump}, {@code /clients}, CSDS, the status page). Three rules, applied
 * wherever a value sits (nested messages, repeated fields, maps, {@code Any}s unpacked through
 * {@link EnvoyTypeRegistry}, {@code Struct}s):
 *
 * <ol>
 *   <li>every {@code DataSource}'s inline content ({@code inline_bytes}, {@code inline_string})
 *       becomes {@code inline_string: "[redacted]"}: inline bytes are how keys, passwords and
 *       htpasswd files travel, and nothing tells them from a body or a certificate. Where it comes
 *       from ({@code filename}, {@code environment_variable}) stays: a path is not the secret;
 *   <li>a field whose name says {@code password}, {@code secret}, {@code key}, {@code token} or
 *       {@code credential} (a {@code Struct} key likewise) is a secret, unless {@link #NOT_SECRET}
 *       names it: every string and bytes value in it, however deep, becomes {@code "[redacted]"}.
 *       Numbers, booleans and enums are kept (they are sizes and switches, never key material);
 *   <li>a header ({@code HeaderValue}) that carries a credential keeps its name and loses its
 *       value: {@code Authorization}, {@code Proxy-Authorization}, {@code Cookie},
 *       {@code Set-Cookie}, a name that says one of the words above ({@code x-api-key}), or a
 *       value that starts with {@code Bearer } or {@code Basic }.
 * </ol>
 *
 * A name the rule matches is secret by default: a new Envoy release's new field is redacted
 * before anyone looks at it. {@code RedactionRuleTest} walks every message type of the API.
 */
public final class Redaction {
  /** What a redacted value says. */
  public static final String REDACTED = "[redacted]";
  private static final ByteString REDACTED_BYTES = ByteString.copyFromUtf8(REDACTED);

  /** The words of rule 2: a field whose name contains one of them holds a secret. */
  public static final List<String> WORDS = List.of("password", "secret", "key", "token",
      "credential");

  /**
   * Names that rule 2 matches and that hold no secret, each with why. A bare name applies in every
   * message; a full name ({@code package.Message.field}) in that message only, for names such as
   * {@code key} that are a secret elsewhere (api_key_auth's {@code Credential.key} is the API key).
   */
  public static final Map<String, String> NOT_SECRET = Map.ofEntries(
      // Bare names: they mean the same thing wherever they appear.
      Map.entry("runtime_key", "names a runtime setting"),
      Map.entry("runtime_key_prefix", "the prefix of runtime setting names"),
      Map.entry("descriptor_key", "a rate limit descriptor's name"),
      Map.entry("disable_key", "the runtime key that turns a rate limit off"),
      Map.entry("generic_key", "a rate limit descriptor, configured, not a credential"),
      Map.entry("metadata_key", "a path into request or host metadata"),
      Map.entry("header_key", "the name of the header a credential goes in"),
      Map.entry("header_key_format", "how header names are cased"),
      Map.entry("key_creator_params", "what the cache key is made of"),
      Map.entry("key_value_store_config", "where a key-value cache is stored"),
      Map.entry("key_value_config", "where the DNS cache is stored"),
      Map.entry("key_formatter", "how a Redis key is rewritten"),
      Map.entry("key_sources", "where in a request the API key is looked for (header, query)"),
      Map.entry("key_log", "where TLS key logs go (a path and address ranges), not the keys"),
      Map.entry("keys", "subset load balancing: metadata key names (TLS session ticket keys are "
          + "DataSources: rule 1)"),
      Map.entry("fallback_keys_subset", "metadata key names"),
      Map.entry("host_env_keys", "names of environment variables, not their values"),
      Map.entry("string_key", "a route scope's key fragment, matched against requests"),
      Map.entry("scope_key_builder", "how a route scope's key is built from a request"),
      Map.entry("share_key", "which rate limiters share a bucket"),
      Map.entry("object_key", "a filter state object's name"),
      Map.entry("factory_key", "a filter state factory's name"),
      Map.entry("bootstrap_metadata_labels_key", "a bootstrap metadata key name"),
      Map.entry("token_bucket", "rate limiter sizes"),
      Map.entry("token_header", "the header name and prefix a token goes in"),
      Map.entry("token_endpoint", "the URL tokens are fetched from"),
      Map.entry("token_exchange_service_uri", "the URL tokens are exchanged at"),
      Map.entry("subject_token_path", "a file path, not the token"),
      Map.entry("subject_token_type", "a token type URN"),
      Map.entry("actor_token_path", "a file path, not the token"),
      Map.entry("actor_token_type", "a token type URN"),
      Map.entry("requested_token_type", "a token type URN"),
      Map.entry("access_token_file", "a file path, not the token"),
      Map.entry("credentials_factory_name", "the name of a credentials plugin"),
      Map.entry("credentials_profile", "an AWS profile name"),
      Map.entry("bearer_token_cookie_config", "cookie attributes (SameSite)"),
      Map.entry("id_token_cookie_config", "cookie attributes (SameSite)"),
      Map.entry("refresh_token_cookie_config", "cookie attributes (SameSite)"),
      Map.entry("hmac_secret", "an SDS reference: the Secret's name and source"),
      Map.entry("token_secret", "an SDS reference: the Secret's name and source"),
      Map.entry("client_secret", "an SDS reference: the Secret's name and source"),
      Map.entry("tls_certificate_sds_secret_configs", "SDS references: names and sources"),
      Map.entry("validation_context_sds_secret_config", "an SDS reference: name and source"),
      Map.entry("session_ticket_keys_sds_secret_config", "an SDS reference: name and source"),
      // Full names: `key` and friends that are names, not secrets, in these messages.
      Map.entry("envoy.config.core.v3.HeaderValue.key", "a header's name (rule 3 covers values)"),
      Map.entry("envoy.api.v2.core.HeaderValue.key", "a header's name (rule 3 covers values)"),
      Map.entry("envoy.config.core.v3.KeyValue.key", "a metadata entry's name"),
      Map.entry("envoy.config.core.v3.KeyValuePair.key", "a metadata entry's name"),
      Map.entry("envoy.config.core.v3.QueryParameter.key", "a query parameter's name"),
      Map.entry("envoy.config.core.v3.HealthCheck.RedisHealthCheck.key", "a Redis key to probe"),
      Map.entry("envoy.api.v2.core.HealthCheck.RedisHealthCheck.key", "a Redis key to probe"),
      Map.entry("envoy.extensions.health_checkers.redis.v3.Redis.key", "a Redis key to probe"),
      Map.entry("envoy.config.health_checker.redis.v2.Redis.key", "a Redis key to probe"),
      Map.entry("envoy.config.route.v3.RouteAction.HashPolicy.FilterState.key",
          "a filter state object's name"),
      Map.entry("envoy.api.v2.route.RouteAction.HashPolicy.FilterState.key",
          "a filter state object's name"),
      Map.entry("envoy.type.v3.HashPolicy.FilterState.key", "a filter state object's name"),
      Map.entry("envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig.HashPolicy.key",
          "a fixed hash key for load balancing"),
      Map.entry("envoy.config.route.v3.ScopedRouteConfiguration.key",
          "the scope's key, matched against requests"),
      Map.entry("envoy.api.v2.ScopedRouteConfiguration.key",
          "the scope's key, matched against requests"),
      Map.entry("envoy.extensions.filters.network.http_connection_manager.v3.ScopedRoutes"
          + ".ScopeKeyBuilder.FragmentBuilder.HeaderValueExtractor.KvElement.key",
          "the name in a header's key=value list"),
      Map.entry("envoy.config.filter.network.http_connection_manager.v2.ScopedRoutes"
          + ".ScopeKeyBuilder.FragmentBuilder.HeaderValueExtractor.KvElement.key",
          "the name in a header's key=value list"),
      Map.entry("envoy.extensions.filters.http.header_to_metadata.v3.Config.KeyValuePair.key",
          "a metadata key name"),
      Map.entry("envoy.config.filter.http.header_to_metadata.v2.Config.KeyValuePair.key",
          "a metadata key name"),
      Map.entry("envoy.extensions.filters.http.json_to_metadata.v3.JsonToMetadata.KeyValuePair"
          + ".key", "a metadata key name"),
      Map.entry("envoy.extensions.filters.http.json_to_metadata.v3.JsonToMetadata.Selector.key",
          "a JSON key to select"),
      Map.entry("envoy.extensions.filters.http.thrift_to_metadata.v3.KeyValuePair.key",
          "a metadata key name"),
      Map.entry("envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol.KeyValuePair"
          + ".key", "a metadata key name"),
      Map.entry("envoy.extensions.filters.network.thrift_proxy.filters.header_to_metadata.v3"
          + ".HeaderToMetadata.KeyValuePair.key", "a metadata key name"),
      Map.entry("envoy.extensions.filters.network.thrift_proxy.filters.payload_to_metadata.v3"
          + ".PayloadToMetadata.KeyValuePair.key", "a metadata key name"),
      Map.entry("envoy.extensions.matching.common_inputs.network.v3.DynamicMetadataInput"
          + ".PathSegment.key", "a metadata path segment"),
      Map.entry("envoy.extensions.matching.common_inputs.network.v3.FilterStateInput.key",
          "a filter state object's name"),
      Map.entry("envoy.type.matcher.v3.FilterStateMatcher.key", "a filter state object's name"),
      Map.entry("envoy.type.matcher.v3.MetadataMatcher.PathSegment.key", "a metadata path segment"),
      Map.entry("envoy.type.matcher.MetadataMatcher.PathSegment.key", "a metadata path segment"),
      Map.entry("envoy.type.matcher.v3.StructMatcher.PathSegment.key", "a Struct path segment"),
      Map.entry("envoy.type.matcher.StructMatcher.PathSegment.key", "a Struct path segment"),
      Map.entry("envoy.type.metadata.v3.MetadataKey.key", "a metadata namespace"),
      Map.entry("envoy.type.metadata.v3.MetadataKey.PathSegment.key", "a metadata path segment"),
      Map.entry("envoy.type.metadata.v2.MetadataKey.key", "a metadata namespace"),
      Map.entry("envoy.type.metadata.v2.MetadataKey.PathSegment.key", "a metadata path segment"),
      Map.entry("envoy.service.discovery.v3.DynamicParameterConstraints.SingleConstraint.key",
          "a dynamic parameter's name"),
      Map.entry("envoy.extensions.filters.http.oauth2.v3.OAuth2Credentials.CookieNames"
          + ".bearer_token", "the name of a cookie"),
      Map.entry("envoy.extensions.filters.http.oauth2.v3.OAuth2Credentials.CookieNames.id_token",
          "the name of a cookie"),
      Map.entry("envoy.extensions.filters.http.oauth2.v3.OAuth2Credentials.CookieNames"
          + ".refresh_token", "the name of a cookie"),
      Map.entry("envoy.extensions.common.ratelimit.v3.RateLimitDescriptor.Entry.key",
          "a rate limit descriptor entry's name"),
      // CEL expressions (RBAC conditions) and OpenTelemetry attributes: names in a program.
      Map.entry("cel.expr.Expr.CreateStruct.Entry.field_key", "a field name in a CEL expression"),
      Map.entry("cel.expr.Expr.CreateStruct.Entry.map_key", "a map key in a CEL expression"),
      Map.entry("cel.expr.MapValue.Entry.key", "a map key in a CEL value"),
      Map.entry("cel.expr.Type.MapType.key_type", "a CEL type"),
      Map.entry("google.api.expr.v1alpha1.Expr.CreateStruct.Entry.field_key",
          "a field name in a CEL expression"),
      Map.entry("google.api.expr.v1alpha1.Expr.CreateStruct.Entry.map_key",
          "a map key in a CEL expression"),
      Map.entry("google.api.expr.v1alpha1.Type.MapType.key_type", "a CEL type"),
      Map.entry("opentelemetry.proto.common.v1.KeyValue.key", "an attribute's name"),
      Map.entry("envoy.extensions.filters.http.grpc_json_transcoder.v3.UnknownQueryParams.key",
          "query parameter names mapped to their values: what a request sent, not config"));

  private static final Set<String> DATA_SOURCES = Set.of("envoy.config.core.v3.DataSource",
      "envoy.api.v2.core.DataSource");
  private static final Set<String> HEADER_VALUES = Set.of("envoy.config.core.v3.HeaderValue",
      "envoy.api.v2.core.HeaderValue");
  private static final Set<String> CREDENTIAL_HEADERS = Set.of("authorization",
      "proxy-authorization", "cookie", "set-cookie");
  /** Message types that carry only a number, a boolean or a time: never key material. */
  private static final Set<String> NUMERIC = Set.of("google.protobuf.BoolValue",
      "google.protobuf.UInt32Value", "google.protobuf.UInt64Value", "google.protobuf.Int32Value",
      "google.protobuf.Int64Value", "google.protobuf.DoubleValue", "google.protobuf.FloatValue",
      "google.protobuf.Duration", "google.protobuf.Timestamp", "google.protobuf.Empty",
      "envoy.type.v3.Percent", "envoy.type.v3.FractionalPercent");
  private static final String STRUCT = "google.protobuf.Struct";

  private Redaction() {}

  /**
   * A served resource as operators may see it: an SDS Secret by its name alone (all of it is key
   * material), any other resource through {@link #redact(Message)}; {@code r.any()} itself when
   * nothing was taken out.
   */
  public static Any redact(XdsResource r) {
    if (r.type() == dev.meridian.xds.ResourceType.SECRET) {
      return Any.pack(io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret.newBuilder()
          .setName(r.name()).build());
    }
    Message m = redact(r.message());
    return m == r.message() ? r.any() : Any.pack(m);
  }

  /** {@code m} without secrets; {@code m} itself when it holds none. */
  public static Message redact(Message m) {
    return walk(m, false);
  }

  /** Whether {@code name} says secret under rule 2 (before exceptions). */
  public static boolean matchesRule(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    for (String w : WORDS) {
      if (n.contains(w)) {
        return true;
      }
    }
    return false;
  }

  /** Whether rule 2 makes {@code f} a secret: its name matches and no exception names it. */
  public static boolean isSecret(FieldDescriptor f) {
    return matchesRule(f.getName()) && !NOT_SECRET.containsKey(f.getName())
        && !NOT_SECRET.containsKey(f.getFullName()) && canHoldSecret(f);
  }

  /** Strings, bytes and messages can; numbers, booleans, enums and their wrappers cannot. */
  public static boolean canHoldSecret(FieldDescriptor f) {
    return switch (f.getJavaType()) {
      case STRING, BYTE_STRING -> true;
      case MESSAGE -> !NUMERIC.contains(f.getMessageType().getFullName());
      default -> false;
    };
  }

  /** {@code all}: inside a secret, where every string and bytes value goes. */
  private static Message walk(Message m, boolean all) {
    if (m instanceof Any any) {
      return any(any, all);
    }
    Descriptor d = m.getDescriptorForType();
    String type = d.getFullName();
    if (type.equals(Any.getDescriptor().getFullName())) {
      return anyFields(m, all);
    }
    if (!all && DATA_SOURCES.contains(type)) {
      return dataSource(m);
    }
    if (!all && HEADER_VALUES.contains(type)) {
      return header(m);
    }
    boolean struct = type.equals(STRUCT);
    Message.Builder b = null;
    for (Map.Entry<FieldDescriptor, Object> e : m.getAllFields().entrySet()) {
      FieldDescriptor f = e.getKey();
      boolean secret = all || isSecret(f);
      if (f.isMapField()) {
        List<?> entries = (List<?>) e.getValue();
        for (int i = 0; i < entries.size(); i++) {
          Message entry = (Message) entries.get(i);
          Message r = mapEntry(entry, secret, struct);
          if (r != entry) {
            b = b == null ? m.toBuilder() : b;
            b.setRepeatedField(f, i, r);
          }
        }
      } else if (f.isRepeated()) {
        List<?> items = (List<?>) e.getValue();
        for (int i = 0; i < items.size(); i++) {
          Object item = items.get(i);
          Object r = value(f, item, secret);
          if (r != item) {
            b = b == null ? m.toBuilder() : b;
            b.setRepeatedField(f, i, r);
          }
        }
      } else {
        Object r = value(f, e.getValue(), secret);
        if (r != e.getValue()) {
          b = b == null ? m.toBuilder() : b;
          b.setField(f, r);
        }
      }
    }
    return b == null ? m : b.build();
  }

  private static Object value(FieldDescriptor f, Object v, boolean secret) {
    return switch (f.getJavaType()) {
      case STRING -> secret && !REDACTED.equals(v) ? REDACTED : v;
      case BYTE_STRING -> secret && !REDACTED_BYTES.equals(v) ? REDACTED_BYTES : v;
      case MESSAGE -> walk((Message) v, secret);
      default -> v;
    };
  }

  /** A map's keys are names and stay; its values are walked. A Struct's keys are field names. */
  private static Message mapEntry(Message entry, boolean secret, boolean struct) {
    Descriptor d = entry.getDescriptorForType();
    FieldDescriptor key = d.findFieldByNumber(1);
    FieldDescriptor val = d.findFieldByNumber(2);
    if (struct && !secret) {
      String k = (String) entry.getField(key);
      secret = matchesRule(k) && !NOT_SECRET.containsKey(k);
    }
    Object v = entry.getField(val);
    Object r = value(val, v, secret);
    return r == v ? entry : entry.toBuilder().setField(val, r).build();
  }

  private static Message dataSource(Message m) {
    Descriptor d = m.getDescriptorForType();
    FieldDescriptor bytes = d.findFieldByName("inline_bytes");
    FieldDescriptor string = d.findFieldByName("inline_string");
    if (!m.hasField(bytes) && !(m.hasField(string) && !REDACTED.equals(m.getField(string)))) {
      return m;
    }
    return m.toBuilder().clearField(bytes).setField(string, REDACTED).build();
  }

  private static Message header(Message m) {
    Descriptor d = m.getDescriptorForType();
    FieldDescriptor value = d.findFieldByName("value");
    FieldDescriptor raw = d.findFieldByName("raw_value"); // absent in v2
    String name = ((String) m.getField(d.findFieldByName("key"))).toLowerCase(Locale.ROOT);
    String v = (String) m.getField(value);
    String rv = raw == null ? "" : ((ByteString) m.getField(raw)).toStringUtf8();
    boolean secret = CREDENTIAL_HEADERS.contains(name) || matchesRule(name)
        || credentialValue(v) || credentialValue(rv);
    if (!secret) {
      return m;
    }
    Message.Builder b = m.toBuilder();
    if (!v.isEmpty()) {
      b.setField(value, REDACTED);
    }
    if (!rv.isEmpty()) {
      b.setField(raw, REDACTED_BYTES);
    }
    return b.build();
  }

  private static boolean credentialValue(String v) {
    String s = v.stripLeading().toLowerCase(Locale.ROOT);
    return s.startsWith("bearer ") || s.startsWith("basic ");
  }

  private static Message any(Any any, boolean all) {
    String typeUrl = any.getTypeUrl();
    Descriptor d = EnvoyTypeRegistry.get().find(typeUrl.substring(typeUrl.lastIndexOf('/') + 1));
    if (d == null) {
      // Nothing here can look inside: show the type, not the bytes.
      return any.getValue().isEmpty() ? any : any.toBuilder().clearValue().build();
    }
    try {
      DynamicMessage inner = DynamicMessage.parseFrom(d, any.getValue());
      Message r = walk(inner, all);
      return r == inner ? any
          : Any.newBuilder().setTypeUrl(typeUrl).setValue(r.toByteString()).build();
    } catch (InvalidProtocolBufferException e) {
      return any.toBuilder().clearValue().build();
    }
  }

  /** An Any met as a DynamicMessage (inside another unpacked Any). */
  private static Message anyFields(Message m, boolean all) {
    try {
      Any a = Any.parseFrom(m.toByteString());
      Any r = (Any) any(a, all);
      return r == a ? m : DynamicMessage.parseFrom(m.getDescriptorForType(), r.toByteString());
    } catch (InvalidProtocolBufferException e) {
      return m;
    }
  }
}
