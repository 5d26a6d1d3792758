package dev.meridian.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The servers of one authority (the top-level {@code xds_servers}, or an authority's), in priority
 * order, and which of them the client uses now (gRFC A71 "Change XdsClient to support fallback
 * within each xDS authority"). The resources of the authority are cached once, whichever server
 * sent them; only the server in use is listened to.
 *
 * <p>Streams are open to the server in use and to every server of higher priority (those retry on
 * their own backoff until one answers, and the client goes back to it); none to servers of lower
 * priority. Touched only on the client's context, except {@link #inUse()}.
 */
final class ServerGroup {
  /** A stream of the group: which server (its index) and which scope. */
  record StreamKey(int server, StreamScope scope) {}

  /**
   * For logs, the bootstrap field: {@code xds_servers} or
   * {@code authorities.a.example.xds_servers}.
   */
  final String name;
  final List<Bootstrap.ServerInfo> servers;
  final Map<StreamKey, ClientStream<?>> streams = new LinkedHashMap<>();
  /** The index of the server whose responses are applied. */
  private int active;
  /** {@link #active}'s server, for readers off the context. */
  private volatile Bootstrap.ServerInfo inUse;

  ServerGroup(String name, List<Bootstrap.ServerInfo> servers) {
    if (servers.isEmpty()) {
      throw new IllegalArgumentException("a server group without servers");
    }
    this.name = name;
    this.servers = List.copyOf(servers);
    this.inUse = this.servers.get(0);
  }

  int active() {
    return active;
  }

  Bootstrap.ServerInfo activeServer() {
    return servers.get(active);
  }

  /** The server in use; any thread. */
  Bootstrap.ServerInfo inUse() {
    return inUse;
  }

  boolean hasFallbackAfter(int index) {
    return index + 1 < servers.size();
  }

  void use(int index) {
    active = index;
    inUse = servers.get(index);
  }

  /** The streams of a scope, from the primary's down to the server in use. */
  List<ClientStream<?>> streamsOf(StreamScope scope) {
    List<ClientStream<?>> out = new ArrayList<>();
    for (int i = 0; i <= active; i++) {
      ClientStream<?> s = streams.get(new StreamKey(i, scope));
      if (s != null) {
        out.add(s);
      }
    }
    return out;
  }

  @Override
  public String toString() {
    return name;
  }
}
