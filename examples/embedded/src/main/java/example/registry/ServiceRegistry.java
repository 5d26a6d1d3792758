package example.registry;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The application's own state, which knows nothing of xDS: services and the instances that
 * registered for them. Each change is reported to the listeners in the order it happened (they
 * run under the registry's lock, so they must be quick; publishing to Meridian is).
 */
public final class ServiceRegistry {
  /** One instance of a service: an IP address (proxyless gRPC wants no host names) and a port. */
  public record Instance(String ip, int port) implements Comparable<Instance> {
    public Instance {
      if (ip == null || ip.isEmpty() || port < 1 || port > 65_535) {
        throw new IllegalArgumentException("an instance is IP:PORT, got " + ip + ":" + port);
      }
    }

    /** {@code 127.0.0.1:50051} (an IPv6 address in brackets: {@code [::1]:50051}). */
    public static Instance parse(String address) {
      int colon = address.lastIndexOf(':');
      if (colon < 1) {
        throw new IllegalArgumentException("an instance is IP:PORT, got '" + address + "'");
      }
      String ip = address.substring(0, colon);
      if (ip.startsWith("[") && ip.endsWith("]")) {
        ip = ip.substring(1, ip.length() - 1);
      }
      try {
        return new Instance(ip, Integer.parseInt(address.substring(colon + 1)));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("an instance is IP:PORT, got '" + address + "'");
      }
    }

    @Override
    public int compareTo(Instance o) {
      int c = ip.compareTo(o.ip);
      return c != 0 ? c : Integer.compare(port, o.port);
    }

    @Override
    public String toString() {
      return (ip.contains(":") ? "[" + ip + "]" : ip) + ":" + port;
    }
  }

  /** Told of every change: the service's instances after it (empty: none left). */
  @FunctionalInterface
  public interface Listener {
    void changed(String service, SortedSet<Instance> instances);
  }

  private final Map<String, SortedSet<Instance>> services = new TreeMap<>();
  private final List<Listener> listeners = new ArrayList<>();

  public synchronized void addListener(Listener listener) {
    listeners.add(listener);
  }

  /** Adds {@code instance} to {@code service}; false when it was already there. */
  public synchronized boolean register(String service, Instance instance) {
    SortedSet<Instance> set = services.computeIfAbsent(service(service), s -> new TreeSet<>());
    if (!set.add(instance)) {
      return false;
    }
    notifyListeners(service, set);
    return true;
  }

  /**
   * Removes {@code instance} from {@code service}; false when it was not there. The service stays
   * known with no instances: its clients see an empty endpoint set rather than a missing cluster.
   */
  public synchronized boolean deregister(String service, Instance instance) {
    SortedSet<Instance> set = services.get(service);
    if (set == null || !set.remove(instance)) {
      return false;
    }
    notifyListeners(service, set);
    return true;
  }

  /** Every service and its instances, as of now. */
  public synchronized Map<String, SortedSet<Instance>> services() {
    Map<String, SortedSet<Instance>> copy = new TreeMap<>();
    services.forEach((s, set) -> copy.put(s, Collections.unmodifiableSortedSet(new TreeSet<>(set))));
    return Collections.unmodifiableMap(copy);
  }

  private void notifyListeners(String service, Set<Instance> set) {
    SortedSet<Instance> now = Collections.unmodifiableSortedSet(new TreeSet<>(set));
    for (Listener l : listeners) {
      l.changed(service, now);
    }
  }

  private static String service(String name) {
    if (name == null || !name.matches("[a-z0-9][a-z0-9.-]*")) {
      throw new IllegalArgumentException("a service name is lower-case letters, digits, '.' and"
          + " '-', got '" + name + "'");
    }
    return name;
  }
}
