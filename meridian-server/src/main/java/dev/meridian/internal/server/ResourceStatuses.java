package dev.meridian.internal.server;

import dev.meridian.internal.protocol.Nack;
import dev.meridian.internal.protocol.XdsStream.TypeStatus;
import dev.meridian.internal.protocol.TypeSnapshot;
import dev.meridian.internal.protocol.XdsResource;
import io.envoyproxy.envoy.admin.v3.ClientResourceStatus;
import io.envoyproxy.envoy.service.status.v3.ConfigStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The per-resource status of one type on one stream, from the server's view: what the client was
 * sent, ACKed or NACKed, against what the server serves now. Shared by {@code /clients} and CSDS so
 * that both say the same thing.
 */
final class ResourceStatuses {
  private ResourceStatuses() {}

  /**
   * @param version the version of the resource the client runs (ACKed), or "" if none
   * @param rejectedVersion the resource's version in the response the client NACKed, else null
   * @param served what the server serves under this name now, or null
   * @param nack the NACK, for NACKED resources
   */
  record ResourceState(String name, String version, String rejectedVersion, XdsResource served,
      ClientResourceStatus clientStatus, ConfigStatus configStatus, Nack nack) {}

  /** True when the latest response of this type was NACKed (and nothing newer was sent since). */
  static boolean rejected(TypeStatus t) {
    return t.pendingNonce() == null && t.lastNack() != null
        && t.lastNack().rejectedVersion().equals(t.sentVersion());
  }

  static List<ResourceState> of(TypeStatus t, TypeSnapshot current) {
    TreeSet<String> names = new TreeSet<>(t.names());
    if (t.wildcard()) {
      names.addAll(current.resources().keySet());
    }
    names.addAll(t.ackedResourceVersions().keySet());
    names.addAll(t.sentResourceVersions().keySet());
    boolean rejected = rejected(t);
    boolean fullState = t.type().fullStateInSotw();
    List<ResourceState> out = new ArrayList<>(names.size());
    for (String n : names) {
      String acked = t.ackedResourceVersions().get(n);
      String carried = t.lastResponseVersions().get(n);
      XdsResource served = current.get(n);
      boolean covered = t.wildcard() || t.names().contains(n);
      ClientResourceStatus cs;
      ConfigStatus config;
      String rejectedVersion = null;
      if (carried != null && rejected) {
        cs = ClientResourceStatus.NACKED;
        config = ConfigStatus.ERROR;
        rejectedVersion = carried;
      } else if (carried != null && t.pendingNonce() != null) {
        cs = ClientResourceStatus.REQUESTED; // sent, neither ACKed nor NACKed yet
        config = ConfigStatus.STALE;
      } else if (acked != null) {
        cs = ClientResourceStatus.ACKED;
        boolean current_ = served != null ? served.version().equals(acked)
            // SotW cannot delete a resource of a non-full-state type (spec "Deleting Resources"):
            // there is nothing more to send for it.
            : !fullState || !covered;
        config = current_ ? ConfigStatus.SYNCED : ConfigStatus.NOT_SENT;
      } else if (served == null) {
        cs = ClientResourceStatus.DOES_NOT_EXIST;
        config = ConfigStatus.NOT_SENT;
      } else {
        cs = ClientResourceStatus.REQUESTED;
        config = ConfigStatus.NOT_SENT;
      }
      out.add(new ResourceState(n, acked == null ? "" : acked, rejectedVersion, served, cs, config,
          cs == ClientResourceStatus.NACKED ? t.lastNack() : null));
    }
    return out;
  }

  /**
   * Whether the client runs exactly what the server serves it now for this type: nothing in flight
   * or rejected, every covered resource ACKed at its current version and, for full-state types, no
   * resource the server no longer serves.
   */
  static boolean inSync(TypeStatus t, TypeSnapshot current) {
    if (t.pendingNonce() != null || rejected(t)) {
      return false;
    }
    Map<String, String> acked = t.ackedResourceVersions();
    for (XdsResource r : current.resources().values()) {
      if ((t.wildcard() || t.names().contains(r.name())) && !r.version().equals(acked.get(r.name()))) {
        return false;
      }
    }
    if (t.type().fullStateInSotw()) {
      for (String n : acked.keySet()) {
        if (current.get(n) == null) {
          return false;
        }
      }
    }
    return true;
  }
}
