package dev.meridian.server;

import dev.meridian.protocol.ResourceType;
import dev.meridian.protocol.ServedConfig;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Holds the served config and the connected streams. A new config is diffed once per group, then
 * each stream is handed the diff on its own serial executor; no stream is touched under a lock.
 */
public final class DiscoveryHub {
  /** A connected stream, notified of config changes. */
  interface Listener {
    void onConfig(ServedConfig config, Map<String, Map<ResourceType, Set<String>>> changes);
  }

  private final AtomicReference<ServedConfig> current = new AtomicReference<>(ServedConfig.empty());
  private final Set<Listener> streams = ConcurrentHashMap.newKeySet();
  private volatile boolean loaded;
  /** Connected streams as operators see them (admin HTTP, CSDS, metrics, shutdown). */
  private final StreamRegistry registry = new StreamRegistry();
  private final Metrics metrics = new Metrics();

  public ServedConfig current() {
    return current.get();
  }

  public boolean isLoaded() {
    return loaded;
  }

  /** Serves {@code next} from now on; returns the number of changed resources across groups. */
  public synchronized int update(ServedConfig next) {
    ServedConfig previous = current.getAndSet(next);
    loaded = true;
    Map<String, Map<ResourceType, Set<String>>> changes = new HashMap<>();
    int changed = 0;
    for (String group : next.groupNames()) {
      Map<ResourceType, Set<String>> diff = next.snapshot(group).changedSince(previous.snapshot(group));
      if (!diff.isEmpty()) {
        changes.put(group, diff);
        changed += diff.values().stream().mapToInt(Set::size).sum();
      }
    }
    for (String group : previous.groupNames()) {
      if (!changes.containsKey(group) && next.snapshot(group) != previous.snapshot(group)) {
        Map<ResourceType, Set<String>> diff = next.snapshot(group).changedSince(previous.snapshot(group));
        if (!diff.isEmpty()) {
          changes.put(group, diff); // the group was removed: its streams re-evaluate their group
        }
      }
    }
    boolean groupsChanged = !previous.groups().stream().map(g -> g.name() + g.matcher())
        .toList().equals(next.groups().stream().map(g -> g.name() + g.matcher()).toList());
    if (changes.isEmpty() && !groupsChanged) {
      return 0; // identical content: nothing is sent to anyone
    }
    for (Listener s : streams) {
      s.onConfig(next, changes);
    }
    return changed;
  }

  void register(Listener stream) {
    streams.add(stream);
  }

  void unregister(Listener stream) {
    streams.remove(stream);
  }

  public StreamRegistry registry() {
    return registry;
  }

  public Metrics metrics() {
    return metrics;
  }

  public int streamCount() {
    return streams.size();
  }
}
