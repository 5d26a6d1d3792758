package dev.meridian.client;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.XdstpName;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.envoyproxy.envoy.service.discovery.v3.ResourceError;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One response, decoded and validated, before it touches the cache. Every problem is collected (not
 * only the first) so that one NACK can report them all, while the valid resources are still used
 * (spec "ACK/NACK and resource instance versioning"; grpc-java's handleResourceUpdate).
 */
final class DecodedResponse {
  static final String RESOURCE_TYPE_URL = "type.googleapis.com/" + Resource.getDescriptor().getFullName();

  /** A valid resource: its name, message, server version and TTL (or null). */
  record Item(String name, Message message, String version, Duration ttl) {}

  final ResourceType type;
  final Map<String, Item> valid = new LinkedHashMap<>();
  /** TTL heartbeats: a wrapped resource without a body refreshes the TTL only (spec "TTL"). */
  final Set<String> heartbeats = new LinkedHashSet<>();
  /** Named resources we rejected, with why: their watchers hear it, the last good value stays. */
  final Map<String, String> invalid = new LinkedHashMap<>();
  final List<String> removed = new ArrayList<>();
  final List<String> errors = new ArrayList<>();
  /** A resource we could not even name: absence in this response then proves nothing. */
  boolean unnamedErrors;
  /**
   * What the server said of requested names it does not send ({@code resource_errors}, xDS TP3;
   * gRFC A88 "Support for Errors Provided by the xDS server"), by name (xdstp names canonical).
   * Not a problem of the response: it is ACKed as usual.
   */
  final Map<String, com.google.rpc.Status> resourceErrors = new LinkedHashMap<>();

  private DecodedResponse(ResourceType type) {
    this.type = type;
  }

  static DecodedResponse sotw(ResourceType type, String version, List<Any> resources) {
    DecodedResponse d = new DecodedResponse(type);
    for (int i = 0; i < resources.size(); i++) {
      Any any = resources.get(i);
      String where = "resources[" + i + "]";
      if (any.getTypeUrl().equals(RESOURCE_TYPE_URL)) {
        // SotW carries TTLs by wrapping the resource in envoy.service.discovery.v3.Resource.
        Resource r;
        try {
          r = any.unpack(Resource.class);
        } catch (InvalidProtocolBufferException e) {
          d.unnamed(where + ": cannot parse Resource wrapper: " + e.getMessage());
          continue;
        }
        d.wrapped(r, version, where);
      } else {
        d.add(any, null, version, null, where);
      }
    }
    return d;
  }

  static DecodedResponse delta(ResourceType type, List<Resource> resources, List<String> removed) {
    DecodedResponse d = new DecodedResponse(type);
    for (int i = 0; i < resources.size(); i++) {
      d.wrapped(resources.get(i), resources.get(i).getVersion(), "resources[" + i + "]");
    }
    d.removed.addAll(removed);
    return d;
  }

  /** Reads {@code resource_errors}; an entry without a name concerns nothing we can tell. */
  DecodedResponse withResourceErrors(List<ResourceError> errors) {
    for (ResourceError e : errors) {
      String name = e.getResourceName().getName();
      if (!name.isEmpty()) {
        resourceErrors.put(XdstpName.canonicalize(name), e.getErrorDetail());
      }
    }
    return this;
  }

  private void wrapped(Resource r, String version, String where) {
    Duration ttl = r.hasTtl() ? r.getTtl() : null;
    if (!r.hasResource()) {
      if (r.getName().isEmpty()) {
        unnamed(where + ": resource without a body or a name");
      } else {
        heartbeats.add(r.getName());
      }
      return;
    }
    add(r.getResource(), r.getName().isEmpty() ? null : r.getName(), version, ttl, where);
  }


  private void add(Any any, String wrapperName, String version, Duration ttl, String where) {
    if (!any.getTypeUrl().equals(type.typeUrl())) {
      error(wrapperName, where + ": type URL " + any.getTypeUrl() + " does not match "
          + type.typeUrl());
      return;
    }
    Message m;
    try {
      m = any.unpack(type.messageClass());
    } catch (InvalidProtocolBufferException e) {
      error(wrapperName, where + ": cannot parse " + type.typeUrl() + ": " + e.getMessage());
      return;
    }
    String name = type.nameOf(m);
    if (wrapperName != null && !name.isEmpty() && !wrapperName.equals(name)) {
      // xdstp names or aliases may differ from the inner name; the wrapper's name is the key.
      name = wrapperName;
    } else if (!type.hasOwnName() && wrapperName != null) {
      name = wrapperName; // an LbEndpoint (LEDS) is named only by its wrapper
    }
    List<String> problems = ResourceValidator.validate(type, m);
    if (name.isEmpty()) {
      unnamed(where + ": " + String.join("; ", problems));
      return;
    }
    if (valid.containsKey(name) || invalid.containsKey(name)) {
      valid.remove(name);
      error(name, "duplicate resource name " + name + " in one response");
      return;
    }
    if (!problems.isEmpty()) {
      error(name, type.abbreviation() + " " + name + ": " + String.join("; ", problems));
      return;
    }
    valid.put(name, new Item(name, m, version, ttl));
  }

  private void error(String name, String message) {
    if (name == null) {
      unnamed(message);
    } else {
      invalid.merge(name, message, (a, b) -> a + "; " + b);
      errors.add(message);
    }
  }

  private void unnamed(String message) {
    unnamedErrors = true;
    errors.add(message);
  }

  /** The errors as one NACK message, bounded (see {@link dev.meridian.internal.protocol.Nack#bound}). */
  String errorDetail() {
    return dev.meridian.internal.protocol.Nack.bound(
        "rejected " + errors.size() + " problem(s): " + String.join("; ", errors));
  }
}
