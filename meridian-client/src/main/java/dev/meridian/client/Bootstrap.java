package dev.meridian.client;

import dev.meridian.internal.protocol.XdstpName;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.Durations;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The client's bootstrap in gRPC's JSON format (gRFC A27, A47 for {@code authorities}, A65 for
 * {@code tls} channel credentials): which control planes to talk to, how, and who we are
 * ({@code node}). Parsing fails fast with a {@link BootstrapException} that names the field at
 * fault.
 */
public record Bootstrap(List<ServerInfo> servers, Node node, Map<String, Authority> authorities,
    String clientDefaultListenerTemplate, boolean everyAuthorityToServers) {

  public static final String ENV_FILE = "GRPC_XDS_BOOTSTRAP";
  public static final String ENV_CONFIG = "GRPC_XDS_BOOTSTRAP_CONFIG";
  static final String USER_AGENT = "meridian-client";

  /** How the channel to a server is secured; the first supported {@code channel_creds} wins. */
  public enum ChannelCreds { INSECURE, TLS }

  /**
   * One entry of {@code xds_servers}. {@code tls} is the gRFC A65 config of {@code TLS} creds (null
   * for {@code INSECURE}).
   */
  public record ServerInfo(String serverUri, ChannelCreds channelCreds, TlsConfig tls,
      List<String> serverFeatures) {
    public ServerInfo {
      serverFeatures = List.copyOf(serverFeatures);
      if (channelCreds == ChannelCreds.TLS && tls == null) {
        tls = TlsConfig.systemRoots();
      } else if (channelCreds == ChannelCreds.INSECURE && tls != null) {
        throw new IllegalArgumentException("a TLS config for insecure channel creds");
      }
    }

    /** TLS creds with the system's trust roots and no client certificate, or insecure. */
    public ServerInfo(String serverUri, ChannelCreds channelCreds, List<String> serverFeatures) {
      this(serverUri, channelCreds, null, serverFeatures);
    }

    /** gRFC A53: {@code ignore_resource_deletion} keeps LDS/CDS resources a response omits. */
    public boolean ignoreResourceDeletion() {
      return serverFeatures.contains("ignore_resource_deletion");
    }
  }

  /** One entry of {@code authorities} (gRFC A47). */
  public record Authority(String clientListenerResourceNameTemplate, List<ServerInfo> servers) {}

  /**
   * @param everyAuthorityToServers an {@code xdstp://} name whose authority is not in {@code
   *     authorities} goes to the top-level servers instead of being refused: one server asked for
   *     everything ({@link #forServer}), as a bootstrap cannot name every authority a server may
   *     serve
   */
  public Bootstrap {
    servers = List.copyOf(servers);
    authorities = Map.copyOf(authorities);
  }

  /** gRFC A47: an {@code xdstp://} name whose authority is not in {@code authorities} is refused. */
  public Bootstrap(List<ServerInfo> servers, Node node, Map<String, Authority> authorities,
      String clientDefaultListenerTemplate) {
    this(servers, node, authorities, clientDefaultListenerTemplate, false);
  }

  /**
   * The first of {@code xds_servers} (gRFC A27), the primary; the client falls back to the others
   * when it is unreachable (gRFC A71, {@link XdsClient#serverInUse()}).
   */
  public ServerInfo primary() {
    return servers.get(0);
  }

  /**
   * The server that serves a resource (gRFC A47): an {@code xdstp://} name goes to its authority's
   * servers (or the top-level ones when the authority lists none); any other name to the
   * top-level servers. Empty when the name's authority is not in the bootstrap.
   */
  public java.util.Optional<ServerInfo> serverFor(String resourceName) {
    if (!XdstpName.isXdstp(resourceName)) {
      return java.util.Optional.of(primary());
    }
    Authority a = authorities.get(XdstpName.parse(resourceName).authority());
    if (a == null) {
      return everyAuthorityToServers ? java.util.Optional.of(primary())
          : java.util.Optional.empty();
    }
    return java.util.Optional.of(a.servers().isEmpty() ? primary() : a.servers().get(0));
  }

  /**
   * The servers that serve a resource, in priority order (gRFC A71: the first is the primary, the
   * others are fallbacks tried in turn): an {@code xdstp://} name's authority's {@code xds_servers}
   * (the top-level ones when the authority lists none); any other name, the top-level
   * {@code xds_servers}. Empty when the name's authority is not in the bootstrap.
   */
  public java.util.Optional<List<ServerInfo>> serversFor(String resourceName) {
    if (!XdstpName.isXdstp(resourceName)) {
      return java.util.Optional.of(servers);
    }
    Authority a = authorities.get(XdstpName.parse(resourceName).authority());
    if (a == null) {
      return everyAuthorityToServers ? java.util.Optional.of(servers)
          : java.util.Optional.empty();
    }
    return java.util.Optional.of(a.servers().isEmpty() ? servers : a.servers());
  }

  /** A bootstrap for one insecure server, as the CLI builds it from its flags. */
  public static Bootstrap forServer(String serverUri, Node node) {
    return forServer(serverUri, node, null);
  }

  /**
   * A bootstrap for one server, over TLS with {@code tls} (gRFC A65), insecure when it is null.
   * It serves every name: {@code xdstp://} names of any authority go to it too (there is no
   * other server to send them to, and a server such as Meridian serves several authorities).
   */
  public static Bootstrap forServer(String serverUri, Node node, TlsConfig tls) {
    ServerInfo server = new ServerInfo(serverUri,
        tls == null ? ChannelCreds.INSECURE : ChannelCreds.TLS, tls, List.of());
    return new Bootstrap(List.of(server), withUserAgent(node.toBuilder()), Map.of(), null, true);
  }

  public static Bootstrap fromFile(Path path) throws BootstrapException {
    String json;
    try {
      json = Files.readString(path, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new BootstrapException(ENV_FILE, "cannot read " + path + ": " + e.getMessage(), e);
    }
    return fromJson(json);
  }

  /**
   * gRFC A27: {@code GRPC_XDS_BOOTSTRAP} names a file; otherwise {@code GRPC_XDS_BOOTSTRAP_CONFIG}
   * holds the JSON itself.
   */
  public static Bootstrap fromEnvironment(Map<String, String> env) throws BootstrapException {
    String file = env.get(ENV_FILE);
    if (file != null && !file.isEmpty()) {
      return fromFile(Path.of(file));
    }
    String config = env.get(ENV_CONFIG);
    if (config != null && !config.isEmpty()) {
      return fromJson(config);
    }
    throw new BootstrapException(ENV_FILE, "neither " + ENV_FILE + " nor " + ENV_CONFIG + " is set");
  }

  public static Bootstrap fromEnvironment() throws BootstrapException {
    return fromEnvironment(System.getenv());
  }

  public static Bootstrap fromJson(String json) throws BootstrapException {
    JsonElement root;
    try {
      root = JsonParser.parseString(json);
    } catch (JsonParseException e) {
      throw new BootstrapException("(root)", "not valid JSON: " + e.getMessage(), e);
    }
    if (!root.isJsonObject()) {
      throw new BootstrapException("(root)", "must be a JSON object");
    }
    JsonObject o = root.getAsJsonObject();
    List<ServerInfo> servers = servers(o.get("xds_servers"), "xds_servers", true);
    Node.Builder node = Node.newBuilder();
    JsonElement n = o.get("node");
    if (n != null && !n.isJsonNull()) {
      if (!n.isJsonObject()) {
        throw new BootstrapException("node", "must be an object");
      }
      try {
        JsonFormat.parser().ignoringUnknownFields().merge(n.toString(), node);
      } catch (InvalidProtocolBufferException e) {
        throw new BootstrapException("node", e.getMessage(), e);
      }
    }
    Map<String, Authority> authorities = new LinkedHashMap<>();
    JsonElement a = o.get("authorities");
    if (a != null && !a.isJsonNull()) {
      if (!a.isJsonObject()) {
        throw new BootstrapException("authorities", "must be an object");
      }
      for (Map.Entry<String, JsonElement> e : a.getAsJsonObject().entrySet()) {
        String field = "authorities." + e.getKey();
        if (!e.getValue().isJsonObject()) {
          throw new BootstrapException(field, "must be an object");
        }
        JsonObject ao = e.getValue().getAsJsonObject();
        String template = optString(ao, "client_listener_resource_name_template", field);
        List<ServerInfo> as = ao.has("xds_servers")
            ? servers(ao.get("xds_servers"), field + ".xds_servers", false) : List.of();
        authorities.put(e.getKey(), new Authority(template, as));
      }
    }
    String template = optString(o, "client_default_listener_resource_name_template", "");
    return new Bootstrap(servers, withUserAgent(node), authorities, template);
  }

  private static Node withUserAgent(Node.Builder node) {
    if (node.getUserAgentName().isEmpty()) {
      node.setUserAgentName(USER_AGENT);
    }
    if (!node.getClientFeaturesList().contains("envoy.lb.does_not_support_overprovisioning")) {
      node.addClientFeatures("envoy.lb.does_not_support_overprovisioning");
    }
    return node.build();
  }

  private static List<ServerInfo> servers(JsonElement e, String field, boolean required)
      throws BootstrapException {
    if (e == null || e.isJsonNull()) {
      throw new BootstrapException(field, "is required");
    }
    if (!e.isJsonArray()) {
      throw new BootstrapException(field, "must be an array");
    }
    JsonArray arr = e.getAsJsonArray();
    if (arr.isEmpty() && required) {
      throw new BootstrapException(field, "must name at least one server");
    }
    List<ServerInfo> out = new ArrayList<>();
    for (int i = 0; i < arr.size(); i++) {
      String f = field + "[" + i + "]";
      if (!arr.get(i).isJsonObject()) {
        throw new BootstrapException(f, "must be an object");
      }
      JsonObject s = arr.get(i).getAsJsonObject();
      String uri = optString(s, "server_uri", f);
      if (uri == null || uri.isBlank()) {
        throw new BootstrapException(f + ".server_uri", "is required");
      }
      out.add(creds(uri, s.get("channel_creds"), f + ".channel_creds",
          features(s.get("server_features"), f + ".server_features")));
    }
    return out;
  }

  private static ServerInfo creds(String uri, JsonElement e, String field, List<String> features)
      throws BootstrapException {
    if (e == null || !e.isJsonArray() || e.getAsJsonArray().isEmpty()) {
      throw new BootstrapException(field, "is required: a non-empty array of {\"type\": ...}");
    }
    List<String> seen = new ArrayList<>();
    JsonArray arr = e.getAsJsonArray();
    for (int i = 0; i < arr.size(); i++) {
      JsonElement c = arr.get(i);
      if (!c.isJsonObject() || !c.getAsJsonObject().has("type")) {
        throw new BootstrapException(field, "every entry needs a \"type\"");
      }
      // A string: getAsString threw UnsupportedOperationException on an object (found by fuzzing)
      String type = optString(c.getAsJsonObject(), "type", field + "[" + i + "]");
      if (type == null) {
        throw new BootstrapException(field, "every entry needs a \"type\"");
      }
      seen.add(type);
      // gRFC A27: use the first type this client supports, ignore the others.
      switch (type) {
        case "insecure":
          return new ServerInfo(uri, ChannelCreds.INSECURE, null, features);
        case "tls":
          return new ServerInfo(uri, ChannelCreds.TLS,
              tlsConfig(c.getAsJsonObject().get("config"), field + "[" + i + "].config"), features);
        default:
          break;
      }
    }
    throw new BootstrapException(field, "no supported type in " + seen + " (supported: insecure, tls)");
  }

  /**
   * gRFC A65: {@code ca_certificate_file} (absent: the system's trust roots),
   * {@code certificate_file} and {@code private_key_file} (both or neither), {@code
   * refresh_interval} (a JSON Duration, default 10 minutes). The files are read and checked now, so
   * that a wrong path or a key of another certificate fails here, naming the field and the file.
   */
  private static TlsConfig tlsConfig(JsonElement e, String field) throws BootstrapException {
    if (e == null || e.isJsonNull()) {
      return TlsConfig.systemRoots();
    }
    if (!e.isJsonObject()) {
      throw new BootstrapException(field, "must be an object");
    }
    JsonObject o = e.getAsJsonObject();
    Path ca = optPath(o, TlsConfig.Role.CA_CERTIFICATE.field(), field);
    Path cert = optPath(o, TlsConfig.Role.CERTIFICATE.field(), field);
    Path key = optPath(o, TlsConfig.Role.PRIVATE_KEY.field(), field);
    if ((cert == null) != (key == null)) {
      TlsConfig.Role missing = cert == null ? TlsConfig.Role.CERTIFICATE : TlsConfig.Role.PRIVATE_KEY;
      TlsConfig.Role given = cert == null ? TlsConfig.Role.PRIVATE_KEY : TlsConfig.Role.CERTIFICATE;
      throw new BootstrapException(field + "." + missing.field(), "is required with "
          + given.field() + " (gRFC A65: a client certificate and its key go together)");
    }
    Duration refresh = null;
    String r = optString(o, "refresh_interval", field);
    if (r != null) {
      try {
        com.google.protobuf.Duration d = Durations.parse(r);
        refresh = Duration.ofSeconds(d.getSeconds(), d.getNanos());
      } catch (ParseException | IllegalArgumentException ex) { // NumberFormatException too
        refresh = Duration.ZERO;
      }
      if (refresh.isNegative() || refresh.isZero()) {
        throw new BootstrapException(field + ".refresh_interval",
            "must be a positive duration such as \"600s\", not \"" + r + "\"");
      }
    }
    TlsConfig tls = new TlsConfig(ca, cert, key, refresh);
    try {
      tls.check();
    } catch (TlsFileException ex) {
      throw new BootstrapException(field + "." + ex.role().field(), ex.getMessage(), ex);
    }
    return tls;
  }

  private static Path optPath(JsonObject o, String name, String parent) throws BootstrapException {
    String s = optString(o, name, parent);
    if (s == null) {
      return null;
    }
    if (s.isBlank()) {
      throw new BootstrapException(parent + "." + name, "must name a file");
    }
    try {
      return Path.of(s);
    } catch (java.nio.file.InvalidPathException e) { // a NUL in the name, found by fuzzing
      throw new BootstrapException(parent + "." + name, "is not a file name: " + e.getReason());
    }
  }

  private static List<String> features(JsonElement e, String field) throws BootstrapException {
    if (e == null || e.isJsonNull()) {
      return List.of();
    }
    if (!e.isJsonArray()) {
      throw new BootstrapException(field, "must be an array of strings");
    }
    List<String> out = new ArrayList<>();
    for (JsonElement f : e.getAsJsonArray()) {
      if (!f.isJsonPrimitive() || !f.getAsJsonPrimitive().isString()) {
        throw new BootstrapException(field, "must be an array of strings");
      }
      out.add(f.getAsString());
    }
    return out;
  }

  private static String optString(JsonObject o, String name, String parent) throws BootstrapException {
    JsonElement e = o.get(name);
    if (e == null || e.isJsonNull()) {
      return null;
    }
    if (!e.isJsonPrimitive() || !e.getAsJsonPrimitive().isString()) {
      throw new BootstrapException(parent.isEmpty() ? name : parent + "." + name, "must be a string");
    }
    return e.getAsString();
  }
}
