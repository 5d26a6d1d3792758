package dev.meridian.internal.config;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.internal.protocol.TypeResolver;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The message types a loader reads: found by full name ({@link TypeResolver}), and their fields
 * by proto or JSON name. Each is worked out once and kept for as long as the owner (a
 * {@link ConfigLoader}, a {@link StoreValues}) lives: nothing here is process-wide, so two servers
 * in one JVM share no lookups. Thread-safe.
 */
final class MessageTypes {
  private final TypeResolver resolver = new TypeResolver(EnvoyTypeRegistry::get);
  private final Map<Descriptor, Map<String, FieldDescriptor>> fieldNames =
      new ConcurrentHashMap<>();

  /** The message descriptor for a full name, or null if the API has no such message. */
  Descriptor find(String fullName) {
    return resolver.find(fullName);
  }

  /**
   * The message of Envoy's API whose full name is a typo away from {@code fullName}, or null:
   * for "did you mean" after an unknown {@code @type}. Runs over every known message (the full
   * scan), so only for a name that was not found.
   */
  String closest(String fullName) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (Descriptor d : EnvoyTypeRegistry.get().descriptors()) {
      String name = d.getFullName();
      int distance = Suggest.distance(fullName, name);
      if (distance < bestDistance || distance == bestDistance && distance != Integer.MAX_VALUE
          && name.compareTo(best) < 0) {
        best = name;
        bestDistance = distance;
      }
    }
    return best;
  }

  /** {@code type}'s fields by proto name and by JSON name. */
  Map<String, FieldDescriptor> fieldNames(Descriptor type) {
    return fieldNames.computeIfAbsent(type, t -> {
      Map<String, FieldDescriptor> m = new HashMap<>();
      for (FieldDescriptor fd : t.getFields()) {
        m.put(fd.getName(), fd);
        m.put(fd.getJsonName(), fd);
      }
      return m;
    });
  }
}
