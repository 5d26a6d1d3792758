package dev.meridian.internal.protocol;

import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * {@link XdsStream#awaitedFor} over a list of clusters just sent: their endpoint names, and those a
 * stream must wait for before routes. After a reload, streams in sync send the same list of changed
 * clusters; an interning {@link Sharing} hands them one instance, which remembers each answer for
 * the streams in the same state.
 */
class Warming {
  private final List<XdsResource> clusters;
  final TypeSnapshot endpoints;
  final Set<String> endpointNames;

  Warming(List<XdsResource> clusters, TypeSnapshot endpoints) {
    this.clusters = clusters;
    this.endpoints = endpoints;
    Set<String> names = new HashSet<>();
    for (XdsResource r : clusters) {
      String cla = XdsStream.edsServiceName(r);
      if (cla != null) {
        names.add(cla);
      }
    }
    this.endpointNames = Collections.unmodifiableSet(names);
  }

  /** The endpoint sets to wait for, given the clusters the stream ACKed and its EDS subscription. */
  Set<String> awaited(VersionMap acked, Subscription asked) {
    Set<String> awaited = new HashSet<>();
    for (XdsResource r : clusters) {
      String cla = XdsStream.awaitedFor(r, acked, asked, endpoints);
      if (cla != null) {
        awaited.add(cla);
      }
    }
    return awaited.isEmpty() ? Set.of() : Collections.unmodifiableSet(awaited);
  }
}
