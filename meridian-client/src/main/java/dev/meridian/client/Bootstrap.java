package dev.meridian.client;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The client's bootstrap in gRPC's JSON format (gRFC A27, A47 for {@code authorities}): which
 * control planes to talk to, how, and who we are ({@code node}). Parsing fails fast with a
 * {@link BootstrapException} that names the field at fault.
 */
public record Bootstrap(List<ServerInfo> servers, Node node, Map<String, Authority> authorities,
    String clientDefaultListenerTemplate) {

  public static final String ENV_FILE = "GRPC_XDS_BOOTSTRAP";
  public static final String ENV_CONFIG = "GRPC_XDS_BOOTSTRAP_CONFIG";
  static final String USER_AGENT = "meridian-client";

  /** How the channel to a server is secured; the first supported {@code channel_creds} wins. */
  public enum ChannelCreds { INSECURE, TLS }

  /** One entry of {@code xds_servers}. */
  public record ServerInfo(String serverUri, ChannelCreds channelCreds, List<String> serverFeatures) {
    public ServerInfo {
      serverFeatures = List.copyOf(serverFeatures);
    }

    /** gRFC A53: {@code ignore_resource_deletion} keeps LDS/CDS resources a response omits. */
    public boolean ignoreResourceDeletion() {
      return serverFeatures.contains("ignore_resource_deletion");
    }
  }

  /** One entry of {@code authorities} (gRFC A47). */
  public record Authority(String clientListenerResourceNameTemplate, List<ServerInfo> servers) {}

  public Bootstrap {
    servers = List.copyOf(servers);
    authorities = Map.copyOf(authorities);
  }

  /** The server the client talks to (gRFC A27: the first of {@code xds_servers}). */
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
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(a.servers().isEmpty() ? primary() : a.servers().get(0));
  }

  /** A bootstrap for one insecure server, as the CLI builds it from its flags. */
  public static Bootstrap forServer(String serverUri, Node node) {
    return new Bootstrap(List.of(new ServerInfo(serverUri, ChannelCreds.INSECURE, List.of())),
        withUserAgent(node.toBuilder()), Map.of(), null);
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
      out.add(new ServerInfo(uri, creds(s.get("channel_creds"), f + ".channel_creds"),
          features(s.get("server_features"), f + ".server_features")));
    }
    return out;
  }

  private static ChannelCreds creds(JsonElement e, String field) throws BootstrapException {
    if (e == null || !e.isJsonArray() || e.getAsJsonArray().isEmpty()) {
      throw new BootstrapException(field, "is required: a non-empty array of {\"type\": ...}");
    }
    List<String> seen = new ArrayList<>();
    for (JsonElement c : e.getAsJsonArray()) {
      if (!c.isJsonObject() || !c.getAsJsonObject().has("type")) {
        throw new BootstrapException(field, "every entry needs a \"type\"");
      }
      String type = c.getAsJsonObject().get("type").getAsString();
      seen.add(type);
      // gRFC A27: use the first type this client supports, ignore the others.
      switch (type) {
        case "insecure": return ChannelCreds.INSECURE;
        case "tls": return ChannelCreds.TLS;
        default: break;
      }
    }
    throw new BootstrapException(field, "no supported type in " + seen + " (supported: insecure, tls)");
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
