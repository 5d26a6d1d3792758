package example.registry;

import com.google.protobuf.Message;
import dev.meridian.server.Change;
import dev.meridian.server.Publisher;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;

/**
 * Keeps Meridian's config in step with the registry: the whole registry once ({@link
 * Publisher#set}), then one {@link Change} per registry change. A service's first instance
 * brings its four resources; every later change of its instances replaces only its
 * ClusterLoadAssignment, so only the clients watching that service's endpoints are sent anything.
 */
public final class RegistryPublisher implements ServiceRegistry.Listener {
  private static final System.Logger LOG = System.getLogger("example.registry");

  private final Publisher publisher;
  private final String group;
  /** Services whose Listener, routes and Cluster are published. Guarded by the registry's lock. */
  private final Set<String> published = new HashSet<>();

  private RegistryPublisher(Publisher publisher, String group) {
    this.publisher = publisher;
    this.group = group;
  }

  /**
   * Publishes {@code registry} to {@code group} and follows its changes. Publishing the group, even
   * empty, is what makes Meridian ready: until then it answers clients UNAVAILABLE.
   */
  public static RegistryPublisher attach(ServiceRegistry registry, Publisher publisher,
      String group) {
    RegistryPublisher p = new RegistryPublisher(publisher, group);
    synchronized (registry) { // no change slips between the first publication and the listener
      List<Message> all = new ArrayList<>();
      registry.services().forEach((service, instances) -> {
        all.addAll(XdsResources.of(service, instances));
        p.published.add(service);
      });
      publisher.set(group, all);
      registry.addListener(p);
    }
    return p;
  }

  @Override
  public void changed(String service, SortedSet<ServiceRegistry.Instance> instances) {
    Change change = published.add(service)
        ? Change.builder().upsertAll(XdsResources.of(service, instances)).build()
        : Change.upsert(XdsResources.endpoints(service, instances));
    int sent = publisher.update(group, change).changed();
    LOG.log(System.Logger.Level.INFO, "service {0}: {1} instance(s) {2}; {3} resource(s) changed",
        service, instances.size(), instances, sent);
  }
}
