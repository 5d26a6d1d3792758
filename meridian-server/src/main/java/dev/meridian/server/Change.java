package dev.meridian.server;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.meridian.xds.ResourceType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * An incremental change to one group: resources to add or replace (upsert) and resources to
 * delete, by type and name. Applied in order by {@link Publisher#update}, as one config change:
 * clients never see half of it. Immutable.
 *
 * <pre>{@code
 * publisher.update("default", Change.builder()
 *     .upsert(clusterLoadAssignment)
 *     .delete(Cluster.class, "retired")
 *     .build());
 * }</pre>
 */
public final class Change {
  /** One step: {@code message} null means delete. */
  record Op(ResourceType type, String name, Message message, Duration ttl) {}

  private final List<Op> ops;

  private Change(List<Op> ops) {
    this.ops = List.copyOf(ops);
  }

  List<Op> ops() {
    return ops;
  }

  public boolean isEmpty() {
    return ops.isEmpty();
  }

  public int size() {
    return ops.size();
  }

  /** A change that upserts {@code resources}. */
  public static Change upsert(Message... resources) {
    Builder b = builder();
    for (Message m : resources) {
      b.upsert(m);
    }
    return b.build();
  }

  /** A change that deletes resources of {@code type} by name. */
  public static Change delete(Class<? extends Message> type, String... names) {
    Builder b = builder();
    for (String n : names) {
      b.delete(type, n);
    }
    return b.build();
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public String toString() {
    return ops.stream().map(o -> (o.message() == null ? "delete " : "upsert ")
        + o.type().abbreviation() + " " + o.name()).toList().toString();
  }

  /** Collects the steps of a change; each is checked when it is added. */
  public static final class Builder {
    private final List<Op> ops = new ArrayList<>();

    private Builder() {}

    /**
     * Adds or replaces the resource of the message's type and name. {@code resource} is an xDS
     * resource message (a {@code Cluster}, a {@code ClusterLoadAssignment}, ...) or an
     * {@link Any} packing one.
     *
     * @throws IllegalArgumentException if it is not an xDS resource type or has no name
     */
    public Builder upsert(Message resource) {
      return upsert(resource, null);
    }

    /**
     * As {@link #upsert(Message)}, with a TTL (spec "TTL"): clients drop the resource unless
     * Meridian's heartbeats keep renewing it, so it vanishes if Meridian goes away. A TTL change
     * is a new version.
     */
    public Builder upsert(Message resource, Duration ttl) {
      if (ttl != null && (ttl.isNegative() || ttl.isZero())) {
        throw new IllegalArgumentException("a TTL must be positive, got " + ttl);
      }
      Op op = Resources.op(resource, ttl);
      ops.add(op);
      return this;
    }

    /**
     * Adds or replaces a resource named {@code name}: how an {@code LbEndpoint} (LEDS, issue 26),
     * which has no name field, is published, named by an xdstp name of its locality's glob
     * collection ({@code xdstp://AUTH/envoy.config.endpoint.v3.LbEndpoint/PATH/NAME}). For other
     * types {@code name} must be the message's own name.
     *
     * @throws IllegalArgumentException if it is not an xDS resource type or the name is empty or
     *     not the message's own
     */
    public Builder upsert(String name, Message resource, Duration ttl) {
      if (ttl != null && (ttl.isNegative() || ttl.isZero())) {
        throw new IllegalArgumentException("a TTL must be positive, got " + ttl);
      }
      ops.add(Resources.op(Resources.name(name), resource, ttl));
      return this;
    }

    /** Upserts every resource of {@code resources}. */
    public Builder upsertAll(Collection<? extends Message> resources) {
      resources.forEach(this::upsert);
      return this;
    }

    /** Deletes the resource of {@code type} (a resource message class) named {@code name}. */
    public Builder delete(Class<? extends Message> type, String name) {
      ops.add(new Op(Resources.type(type), Resources.name(name), null, null));
      return this;
    }

    /**
     * Deletes by type URL ({@code type.googleapis.com/envoy.config.cluster.v3.Cluster}) and name.
     */
    public Builder delete(String typeUrl, String name) {
      ResourceType t = ResourceType.fromTypeUrl(typeUrl).orElseThrow(() ->
          new IllegalArgumentException("not an xDS resource type URL: " + typeUrl));
      ops.add(new Op(t, Resources.name(name), null, null));
      return this;
    }

    public Change build() {
      return new Change(ops);
    }
  }

  /** How a message becomes a typed, named resource. */
  static final class Resources {
    private Resources() {}

    static Op op(Message resource, Duration ttl) {
      return op(null, resource, ttl);
    }

    /** {@code name}: the name given, null for the message's own. */
    static Op op(String given, Message resource, Duration ttl) {
      if (resource == null) {
        throw new IllegalArgumentException("a resource must not be null");
      }
      Message m = resource;
      ResourceType t;
      if (resource instanceof Any any) {
        t = ResourceType.fromTypeUrl(any.getTypeUrl()).orElseThrow(() ->
            new IllegalArgumentException("an Any of " + any.getTypeUrl()
                + ", which is not an xDS resource type"));
        try {
          m = any.unpack(t.messageClass());
        } catch (InvalidProtocolBufferException e) {
          throw new IllegalArgumentException("an Any of " + any.getTypeUrl()
              + " that does not parse: " + e.getMessage(), e);
        }
      } else {
        t = type(resource.getClass());
      }
      if (!t.hasOwnName() && given == null) {
        throw new IllegalArgumentException("a " + t.messageClass().getSimpleName()
            + " has no name field: give its name (upsert(name, resource, ttl))");
      }
      if (t.hasOwnName() && given != null && !given.equals(t.nameOf(m))) {
        throw new IllegalArgumentException("a " + t.messageClass().getSimpleName() + " named '"
            + t.nameOf(m) + "' cannot be published as '" + given + "'");
      }
      String name = given != null ? given : t.nameOf(m);
      if (name == null || name.isEmpty()) {
        throw new IllegalArgumentException("a " + t.messageClass().getSimpleName()
            + " without a name: every resource needs one");
      }
      // The rules a config file's names follow (TP1): requests match xdstp names by their
      // canonical form, so a name in another spelling could never be asked for.
      String problem = t == ResourceType.LB_ENDPOINT
          ? dev.meridian.internal.protocol.Leds.problemAsEndpointName(name)
          : dev.meridian.internal.protocol.XdstpName.problemAsResourceName(name, t.typeUrl());
      if (problem != null) {
        throw new IllegalArgumentException("'" + name + "': " + problem);
      }
      return new Op(t, name, m, ttl);
    }

    static ResourceType type(Class<?> messageClass) {
      return ResourceType.fromMessageClass(messageClass).orElseThrow(() ->
          new IllegalArgumentException(messageClass.getName() + " is not an xDS resource type "
              + "(Listener, RouteConfiguration, ScopedRouteConfiguration, VirtualHost, Cluster, "
              + "ClusterLoadAssignment, Secret, Runtime, TypedExtensionConfig, LbEndpoint)"));
    }

    static String name(String name) {
      if (name == null || name.isEmpty()) {
        throw new IllegalArgumentException("a resource name must not be empty");
      }
      return name;
    }
  }
}
