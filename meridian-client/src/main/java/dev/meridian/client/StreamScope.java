package dev.meridian.client;

import dev.meridian.xds.ResourceType;
import java.util.Objects;

/**
 * Which discovery service a stream calls (spec "RPC Services and Methods"): the aggregated one,
 * carrying every type, or one type's own service. A type, so that "ADS" is never spelled as a
 * missing resource type.
 */
public sealed interface StreamScope {
  /** {@code StreamAggregatedResources} / {@code DeltaAggregatedResources}. */
  StreamScope ADS = new Aggregated();

  /** One type's service, e.g. {@code StreamClusters} / {@code DeltaClusters}. */
  static StreamScope of(ResourceType type) {
    return new OneType(type);
  }

  /** Whether responses of {@code type} belong on this stream. */
  boolean carries(ResourceType type);

  /** Every type, multiplexed by type URL. */
  record Aggregated() implements StreamScope {
    @Override
    public boolean carries(ResourceType type) {
      return true;
    }

    @Override
    public String toString() {
      return "ADS";
    }
  }

  /** A single type. */
  record OneType(ResourceType type) implements StreamScope {
    public OneType {
      Objects.requireNonNull(type, "type");
    }

    @Override
    public boolean carries(ResourceType t) {
      return type == t;
    }

    @Override
    public String toString() {
      return type.abbreviation();
    }
  }
}
