package dev.meridian.server;

import com.google.protobuf.Message;
import dev.meridian.internal.config.ConfigChecks;
import dev.meridian.internal.config.InlineKeys;
import dev.meridian.internal.config.ReferenceCheck;
import dev.meridian.internal.pgv.PgvRules;
import dev.meridian.internal.pgv.Violation;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.internal.protocol.LogLine;
import dev.meridian.internal.protocol.TypeResolver;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.SecretAccess;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.Snapshot;
import dev.meridian.internal.protocol.XdsResource;
import dev.meridian.internal.server.DiscoveryHub;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Publishes config from code: per group, a full resource set ({@link #set}) or an incremental
 * change ({@link #update}). Every call is one config change, diffed and versioned by content as a
 * file reload is: a resource whose bytes did not change keeps its version and is sent to no one,
 * and only the streams a change concerns are visited. Thread-safe; calls are applied one at a
 * time, in the order they are made.
 *
 * <p>A call returns once every stream the change concerns has it in hand (idle streams have
 * already pushed it): with 1,000 clients of 10,000 clusters, an every-cluster change holds the
 * caller for about a second, longer on a loaded machine. Publish from a thread of your own, not
 * from a request handler that must answer quickly.
 *
 * <p>Until the first publication Meridian refuses xDS calls with UNAVAILABLE (so that a client
 * never mistakes "not computed yet" for "everything was deleted") and is not ready; publish the
 * groups you know, even empty, once your data is loaded.
 */
public final class Publisher {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.server.publish");

  private final DiscoveryHub hub;
  private final ServedConfig.Placer placer;
  private final Validation validation;
  private final Runnable afterPublish;
  /** Resources built (each serialized once) by every call: {@code meridian_resources_serialized_total}. */
  private final java.util.concurrent.atomic.AtomicLong serialized =
      new java.util.concurrent.atomic.AtomicLong();
  /** group → type → name → resource: what is in force. Replaced, never changed in place. */
  private Map<String, Map<ResourceType, Map<String, XdsResource>>> groups = Map.of();
  private Map<String, Snapshot> snapshots = Map.of();

  /** Meridian's own server runs mTLS: key material goes only in Secrets, sent by identity. */
  private final boolean mtls;
  /** What the checks of the last publish found in each resource: the next looks into changes. */
  private final dev.meridian.internal.config.InlineKeys.Memo inlineKeys =
      new dev.meridian.internal.config.InlineKeys.Memo();

  /** Envoy's rules ({@link RuleSet#ENVOY}), or null: checked on each new or changed resource. */
  private final PgvRules rules;

  Publisher(DiscoveryHub hub, ServedConfig.Placer placer, Validation validation,
      Runnable afterPublish) {
    this(hub, placer, validation, RuleSet.ENVOY, false, afterPublish);
  }

  Publisher(DiscoveryHub hub, ServedConfig.Placer placer, Validation validation, RuleSet rules,
      boolean mtls, Runnable afterPublish) {
    if (rules == RuleSet.ENVOY) {
      TypeResolver types = new TypeResolver(EnvoyTypeRegistry::get);
      this.rules = new PgvRules(url -> types.find(url.substring(url.lastIndexOf('/') + 1)),
          java.time.Clock.systemUTC());
    } else {
      this.rules = null;
    }
    this.mtls = mtls;
    this.hub = hub;
    this.placer = placer;
    this.validation = validation;
    this.afterPublish = afterPublish;
  }

  /**
   * Makes {@code resources} the whole content of {@code group} (as java-control-plane's
   * {@code setSnapshot}): resources it held that are not in {@code resources} are deleted.
   *
   * @param resources xDS resource messages, or {@link com.google.protobuf.Any}s packing them;
   *     names must be unique per type
   * @throws IllegalArgumentException if a resource is not an xDS resource, has no name or
   *     repeats a name; nothing changes
   * @throws InvalidConfigException when a new or changed resource breaks one of Envoy's rules
   *     ({@link RuleSet#ENVOY}, the default), under {@link Validation#REJECT}, and with {@link
   *     Meridian.Builder#tls} mTLS for key material inlined outside a Secret; nothing changes
   */
  public synchronized Publication set(String group, Collection<? extends Message> resources) {
    return setAll(Map.of(group(group), resources), false);
  }

  /**
   * Makes {@code groups} the whole config, in one change: every group not named is removed.
   * See {@link #set}.
   */
  public synchronized Publication setAll(Map<String, ? extends Collection<? extends Message>> groups) {
    return setAll(groups, true);
  }

  private Publication setAll(Map<String, ? extends Collection<? extends Message>> sets,
      boolean whole) {
    Map<String, Map<ResourceType, Map<String, XdsResource>>> next =
        whole ? new HashMap<>() : new HashMap<>(groups);
    Set<String> touched = new TreeSet<>();
    List<String> broken = new ArrayList<>();
    sets.forEach((group, resources) -> {
      Map<ResourceType, Map<String, XdsResource>> before = groups.getOrDefault(group(group), Map.of());
      Map<ResourceType, Map<String, XdsResource>> after = new EnumMap<>(ResourceType.class);
      for (Message m : resources) {
        Change.Op op = Change.Resources.op(m, null);
        XdsResource r = resource(before.getOrDefault(op.type(), Map.of()).get(op.name()), op,
            group, broken);
        if (after.computeIfAbsent(op.type(), t -> new HashMap<>()).put(op.name(), r) != null) {
          throw new IllegalArgumentException("group '" + group + "' has two "
              + op.type().abbreviation() + " resources named '" + op.name() + "'");
        }
      }
      next.put(group, after);
      touched.add(group);
    });
    if (whole) {
      touched.addAll(groups.keySet()); // removed groups change too
    }
    refuseBroken(broken);
    return commit(next, touched);
  }

  /**
   * Applies {@code change} to {@code group} (created if new), as one config change.
   *
   * @throws InvalidConfigException when a new or changed resource breaks one of Envoy's rules
   *     ({@link RuleSet#ENVOY}, the default), under {@link Validation#REJECT}, and with {@link
   *     Meridian.Builder#tls} mTLS for key material inlined outside a Secret; nothing changes
   */
  public synchronized Publication update(String group, Change change) {
    Map<ResourceType, Map<String, XdsResource>> before = groups.getOrDefault(group(group), Map.of());
    Map<ResourceType, Map<String, XdsResource>> after = new EnumMap<>(ResourceType.class);
    after.putAll(before);
    Set<ResourceType> copied = java.util.EnumSet.noneOf(ResourceType.class);
    List<String> broken = new ArrayList<>();
    for (Change.Op op : change.ops()) {
      if (copied.add(op.type())) {
        after.put(op.type(), new HashMap<>(before.getOrDefault(op.type(), Map.of())));
      }
      Map<String, XdsResource> byName = after.get(op.type());
      if (op.message() == null) {
        byName.remove(op.name());
      } else {
        byName.put(op.name(), resource(byName.get(op.name()), op, group, broken));
      }
    }
    refuseBroken(broken);
    Map<String, Map<ResourceType, Map<String, XdsResource>>> next = new HashMap<>(groups);
    next.put(group, after);
    return commit(next, Set.of(group));
  }

  /** Removes {@code group}: its nodes are served nothing until it is published again. */
  public synchronized Publication remove(String group) {
    if (!groups.containsKey(group)) {
      return new Publication(0, List.of());
    }
    Map<String, Map<ResourceType, Map<String, XdsResource>>> next = new HashMap<>(groups);
    next.remove(group);
    return commit(next, Set.of(group));
  }

  /** The groups published, sorted. */
  public synchronized Set<String> groups() {
    return Collections.unmodifiableSet(new TreeSet<>(groups.keySet()));
  }

  /** What {@code group} holds now, by type then name; empty for an unknown group. */
  public synchronized List<Message> resources(String group) {
    List<Message> out = new ArrayList<>();
    groups.getOrDefault(group, Map.of()).forEach((type, byName) ->
        new java.util.TreeMap<>(byName).values().forEach(r -> out.add(r.message())));
    return out;
  }

  private static String group(String group) {
    if (group == null || group.isEmpty()) {
      throw new IllegalArgumentException("a group name must not be empty");
    }
    return group;
  }

  /**
   * How many resources the publisher has serialized over all its calls, rejected ones included:
   * the engine exposes it as {@code meridian_resources_serialized_total}, as the config loader's
   * count is for a file. Thread-safe.
   */
  long resourcesSerialized() {
    return serialized.get();
  }

  /**
   * The resource for {@code op}: the one in force when its content is the same. A new or changed
   * one is checked against Envoy's rules; what it breaks is added to {@code broken}.
   */
  private XdsResource resource(XdsResource old, Change.Op op, String group, List<String> broken) {
    com.google.protobuf.Duration ttl = op.ttl() == null ? null
        : com.google.protobuf.util.Durations.fromNanos(op.ttl().toNanos());
    // equals() is an identity check first: the very object published before costs nothing
    if (old != null && java.util.Objects.equals(old.ttl(), ttl)
        && old.message().equals(op.message())) {
      // The very object published before, or an equal one (an application that rebuilds its
      // whole config each time): equal messages, unknown fields included, serialize to the same
      // deterministic bytes, so nothing to serialize: it keeps its version.
      return old;
    }
    if (rules != null && (old == null || !old.message().equals(op.message()))) {
      for (Violation v : rules.check(op.message())) {
        broken.add("group '" + group + "': " + op.type().messageClass().getSimpleName() + " "
            + op.name() + ": " + v);
      }
    }
    XdsResource r = XdsResource.named(op.type(), op.name(), op.message(), ttl, List.of());
    serialized.incrementAndGet();
    return old != null && old.version().equals(r.version()) ? old : r;
  }

  /**
   * Refuses a call whose resources break Envoy's rules: every Envoy would reject the responses
   * that carry them. Nothing changes; the status page shows it as a rejected reload.
   */
  private void refuseBroken(List<String> broken) {
    if (!broken.isEmpty()) {
      hub.reloadRejected(broken);
      throw new InvalidConfigException(broken);
    }
  }

  private Publication commit(Map<String, Map<ResourceType, Map<String, XdsResource>>> next,
      Set<String> touched) {
    long started = System.nanoTime();
    Map<String, Snapshot> nextSnapshots = new HashMap<>(snapshots);
    for (String g : touched) {
      Map<ResourceType, Map<String, XdsResource>> content = next.get(g);
      if (content == null) {
        nextSnapshots.remove(g);
        continue;
      }
      List<XdsResource> all = new ArrayList<>();
      content.values().forEach(byName -> all.addAll(byName.values()));
      nextSnapshots.put(g, Snapshot.of(all, snapshots.getOrDefault(g, Snapshot.empty())));
    }
    ServedConfig config = new ServedConfig(nextSnapshots, placer, SecretAccess.NONE);
    if (mtls) {
      // Whatever the validation: under mTLS a key outside a Secret would go to every client of
      // its group, identity or not. The memo walks only what this call changed; the findings of
      // the groups it did not touch were refused before.
      List<String> refused = new ArrayList<>();
      for (InlineKeys.Found f : InlineKeys.find(config, inlineKeys)) {
        if (f.groups().stream().anyMatch(touched::contains)) {
          refused.add(f.message(true));
        }
      }
      if (!refused.isEmpty()) {
        hub.reloadRejected(refused);
        throw new InvalidConfigException(refused);
      }
    }
    List<String> warnings = List.of();
    if (validation != Validation.OFF) {
      ConfigChecks.Result r = ConfigChecks.run(config,
          validation == Validation.REJECT ? ReferenceCheck.REJECT : ReferenceCheck.WARN, mtls,
          inlineKeys);
      if (r.rejected()) {
        // meridian_config_reloads_total{result="failed"}, and the status page's last rejection
        hub.reloadRejected(r.rejectionMessages());
        throw new InvalidConfigException(r.rejectionMessages());
      }
      // An empty group is normal for an application whose data is still empty: not a finding.
      warnings = r.warnings().stream().filter(f -> f.check() != ConfigChecks.Check.EMPTY_CONFIG)
          .map(Object::toString).toList();
      for (String w : warnings) {
        LOG.warn(w);
      }
    }
    int changed = hub.update(config);
    hub.reloaded(changed, warnings); // a publication is this server's reload
    groups = next;
    snapshots = nextSnapshots;
    afterPublish.run();
    LOG.atDebug().log(() -> LogLine.of("config_publish")
        .kv("groups", String.join(",", touched)).kv("changed", changed)
        .kv("dispatch_ms", (System.nanoTime() - started) / 1_000_000).toString());
    return new Publication(changed, warnings);
  }
}
