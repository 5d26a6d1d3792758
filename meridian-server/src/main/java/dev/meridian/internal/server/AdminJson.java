package dev.meridian.internal.server;

import static dev.meridian.internal.protocol.ClientText.clip;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.internal.protocol.Nack;
import dev.meridian.internal.protocol.NodeMatcher;
import dev.meridian.internal.protocol.Redaction;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.XdsStream.TypeStatus;
import dev.meridian.internal.protocol.TypeSnapshot;
import dev.meridian.internal.protocol.XdsResource;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The JSON documents of the admin port. Field names are a contract, documented in
 * docs/operations.md: add fields, never rename or remove them. Absent values are {@code null}, never
 * omitted.
 */
final class AdminJson {
  private AdminJson() {}

  /**
   * {@code GET /clients}: one entry per connected stream, in connection order, and the server's
   * {@code control_plane} identifier (issue 21), which every response to them carries; null if
   * it has none.
   */
  static JsonObject clients(List<ClientStatus> statuses, ServedConfig config, NodeMatcher filter,
      String controlPlaneId) {
    JsonArray list = new JsonArray();
    for (ClientStatus s : statuses) {
      if (filter != null && (s.node() == null || !filter.matches(s.node()))) {
        continue;
      }
      list.add(client(s, config));
    }
    JsonObject root = new JsonObject();
    root.addProperty("control_plane", controlPlaneId);
    root.addProperty("count", list.size());
    root.add("clients", list);
    return root;
  }

  /** The config store's state, for {@code /clients}. */
  static JsonObject store(dev.meridian.internal.config.ConfigSource store) {
    dev.meridian.internal.config.ConfigSource.Status s = store.status();
    JsonObject o = new JsonObject();
    o.addProperty("source", store.describe());
    o.addProperty("connected", s.connected());
    o.addProperty("since", s.since().toString());
    o.addProperty("loaded", s.loaded());
    o.addProperty("revision", s.revision());
    o.addProperty("detail", s.detail());
    return o;
  }

  /**
   * {@code GET /status}: what the status page shows besides the clients (issue 24): this server's
   * id and readiness, the groups with their resource counts per type, the last load or reload,
   * the last rejected and the last held one, whether the source's content is what is served and
   * what the checks warn about in it, the last publish of files (null without
   * {@code --publish-dir}) and the config store's state (null for a config file).
   */
  static JsonObject status(String controlPlaneId, boolean ready, ServedConfig config,
      ReloadStatus reloads, PublishStatus.Publish publish,
      dev.meridian.internal.config.ConfigSource store) {
    JsonObject root = new JsonObject();
    root.addProperty("control_plane", controlPlaneId);
    root.addProperty("ready", ready);
    JsonArray groups = new JsonArray();
    for (String g : config.groupNames()) {
      JsonObject go = new JsonObject();
      go.addProperty("name", g);
      JsonObject counts = new JsonObject();
      int total = 0;
      for (ResourceType t : ResourceType.values()) {
        int n = config.snapshot(g).get(t).size();
        if (n > 0) {
          counts.addProperty(t.abbreviation(), n);
          total += n;
        }
      }
      go.add("resources", counts);
      go.addProperty("total", total);
      groups.add(go);
    }
    root.add("groups", groups);
    ReloadStatus.View v = reloads.view();
    root.add("last_reload", reload(v.last()));
    root.add("last_failed_reload", reload(v.lastFailure()));
    root.add("last_held_reload", reload(v.lastHeld()));
    root.addProperty("config_state", v.state() == null ? null : v.state().label());
    root.add("warnings", strings(v.warnings()));
    root.add("publish", publish(publish));
    root.add("config_source", store == null ? JsonNull.INSTANCE : store(store));
    return root;
  }

  private static com.google.gson.JsonElement publish(PublishStatus.Publish p) {
    if (p == null) {
      return JsonNull.INSTANCE;
    }
    JsonObject o = new JsonObject();
    o.addProperty("dir", p.dir());
    o.addProperty("at", p.at().toString());
    o.addProperty("result", p.ok() ? "ok" : "failed");
    JsonArray errors = new JsonArray();
    p.errors().forEach(errors::add);
    o.add("errors", errors);
    return o;
  }

  private static com.google.gson.JsonElement reload(ReloadStatus.Reload r) {
    if (r == null) {
      return JsonNull.INSTANCE;
    }
    JsonObject o = new JsonObject();
    o.addProperty("at", r.at().toString());
    o.addProperty("result", r.result().label());
    o.addProperty("changed", r.changed());
    o.add("errors", strings(r.errors()));
    o.add("warnings", strings(r.warnings()));
    o.add("removes", strings(r.removes()));
    return o;
  }

  private static JsonArray strings(List<String> values) {
    JsonArray a = new JsonArray();
    values.forEach(a::add);
    return a;
  }

  static JsonObject client(ClientStatus s, ServedConfig config) {
    JsonObject o = new JsonObject();
    StreamInfo i = s.stream();
    o.addProperty("stream_id", i.id());
    o.addProperty("node_id", s.node() == null ? null : clip(s.node().getId()));
    o.addProperty("node_cluster", s.node() == null ? null : clip(s.node().getCluster()));
    o.addProperty("group", s.group());
    o.addProperty("peer", i.peer());
    o.addProperty("identity", clip(i.identity()));
    // uri (a SPIFFE ID, from the URI SAN) or dns (a host name, from a DNS SAN): globs are typed
    o.addProperty("identity_type", dev.meridian.internal.protocol.Identity.typeOf(i.identity()));
    o.addProperty("variant", i.variant());
    o.addProperty("ads", i.ads());
    o.addProperty("service", i.service());
    o.addProperty("method", i.method());
    o.addProperty("connected_since", i.connectedSince().toString());
    boolean allInSync = s.node() != null;
    JsonArray types = new JsonArray();
    for (TypeStatus t : s.types()) {
      TypeSnapshot current = config.snapshot(s.group()).get(t.type());
      boolean inSync = ResourceStatuses.inSync(t, current);
      allInSync &= inSync;
      JsonObject to = new JsonObject();
      to.addProperty("type", t.type().abbreviation());
      to.addProperty("type_url", t.type().typeUrl());
      to.addProperty("wildcard", t.wildcard());
      JsonArray names = new JsonArray();
      new TreeSet<>(t.names()).forEach(n -> names.add(clip(n)));
      to.add("resource_names", names);
      to.addProperty("last_sent_version", emptyToNull(t.sentVersion()));
      to.addProperty("last_acked_version", clip(emptyToNull(t.ackedVersion())));
      to.addProperty("pending_nonce", clip(t.pendingNonce()));
      to.add("last_nack", nack(t.lastNack()));
      to.addProperty("in_sync", inSync);
      to.add("sent_resource_versions", map(t.sentResourceVersions()));
      to.add("acked_resource_versions", map(t.ackedResourceVersions()));
      types.add(to);
    }
    o.addProperty("in_sync", allInSync);
    o.add("types", types);
    return o;
  }

  private static JsonObject map(Map<String, String> m) {
    JsonObject o = new JsonObject();
    new TreeMap<>(m).forEach((k, v) -> o.addProperty(clip(k), clip(v)));
    return o;
  }


  private static String emptyToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }

  private static com.google.gson.JsonElement nack(Nack n) {
    if (n == null) {
      return JsonNull.INSTANCE;
    }
    JsonObject o = new JsonObject();
    o.addProperty("version", clip(n.rejectedVersion()));
    o.addProperty("kept_version", clip(emptyToNull(n.keptVersion())));
    o.addProperty("nonce", clip(n.nonce()));
    o.addProperty("code", n.code());
    o.addProperty("message", clip(n.message()));
    o.addProperty("at", n.at().toString());
    return o;
  }

  /**
   * {@code GET /config_dump}: the served resources per group and type, as proto3 JSON, with their
   * versions. {@code group} and {@code type} narrow it (null: all).
   */
  static JsonObject configDump(ServedConfig config, String group, ResourceType type) {
    JsonArray groups = new JsonArray();
    for (String g : config.groupNames()) {
      if (group != null && !group.equals(g)) {
        continue;
      }
      JsonObject go = new JsonObject();
      go.addProperty("name", g);
      JsonArray types = new JsonArray();
      for (ResourceType t : ResourceType.values()) {
        if (type != null && type != t) {
          continue;
        }
        TypeSnapshot ts = config.snapshot(g).get(t);
        if (ts.size() == 0 && type == null) {
          continue;
        }
        JsonObject to = new JsonObject();
        to.addProperty("type", t.abbreviation());
        to.addProperty("type_url", t.typeUrl());
        to.addProperty("version", ts.version());
        JsonArray resources = new JsonArray();
        for (XdsResource r : ts.resources().values()) {
          JsonObject ro = new JsonObject();
          ro.addProperty("name", r.name());
          ro.addProperty("version", r.version());
          ro.addProperty("redacted", t == ResourceType.SECRET);
          ro.add("resource", JsonParser.parseString(print(r)));
          resources.add(ro);
        }
        to.add("resources", resources);
        types.add(to);
      }
      go.add("types", types);
      groups.add(go);
    }
    JsonObject root = new JsonObject();
    root.add("groups", groups);
    return root;
  }

  /**
   * A resource as proto3 JSON with {@code @type}. Secrets (SDS: private keys, session ticket keys)
   * are never dumped: only their name is, as a valid Secret.
   */
  private static String print(XdsResource r) {
    try {
      return EnvoyTypeRegistry.get().printer().print(redacted(r));
    } catch (InvalidProtocolBufferException e) {
      // Every served resource was parsed with the same registry; this would be a bug.
      throw new IllegalStateException("cannot print " + r, e);
    }
  }

  /** The resource as an Any without secrets (shared with CSDS): {@link Redaction#redact}. */
  static com.google.protobuf.Any redacted(XdsResource r) {
    return Redaction.redact(r);
  }
}
