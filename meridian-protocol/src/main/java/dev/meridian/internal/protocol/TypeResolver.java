package dev.meridian.internal.protocol;

import com.google.protobuf.Descriptors.Descriptor;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Finds the messages a config names in {@code "@type"} one by one, so that reading a config
 * builds the descriptors of the types it uses, not of Envoy's whole API. The full scan
 * ({@link EnvoyTypeRegistry}) loads some 1,000 generated files, a quarter of a second or more
 * of a start on 2 cores (issue 18, "A 20-second start"); here it only runs for a name that the
 * API jars' Java package conventions do not find.
 *
 * <p>Thread-safe: {@link #find} is synchronized; descriptors are immutable. Its owner (a config
 * loader, say) keeps one for as long as it lives; there is no process-wide instance, so two
 * servers in one JVM share no lookups (only the immutable {@link EnvoyTypeRegistry}).
 */
public final class TypeResolver {
  /**
   * Where the API jars put a proto package's classes: {@code envoy.*} under
   * {@code io.envoyproxy}, {@code xds.*} under {@code com.github}, {@code udpa.*} under
   * {@code com.github.udpa}, {@code google.*} under {@code com}, {@code cel.*} under {@code dev},
   * {@code opentelemetry.*} under {@code io}, or the proto package itself.
   */
  private static final List<String> JAVA_PREFIXES =
      List.of("io.envoyproxy.", "com.github.", "com.github.udpa.", "com.", "dev.", "io.", "");

  private final Supplier<EnvoyTypeRegistry> fullScan;
  private final Map<String, Descriptor> found = new HashMap<>();
  /** Names looked up already, found or not: each is looked up once. */
  private final Set<String> tried = new HashSet<>();

  /** @param fullScan every API message, for a name the conventions do not find */
  public TypeResolver(Supplier<EnvoyTypeRegistry> fullScan) {
    this.fullScan = fullScan;
  }

  /** The message descriptor for a full name, or null if the API has no such message. */
  public synchronized Descriptor find(String fullName) {
    if (tried.add(fullName)) {
      Descriptor d = byConvention(fullName);
      if (d == null) {
        d = fullScan.get().find(fullName);
      }
      if (d != null) {
        found.put(fullName, d);
      }
    }
    return found.get(fullName);
  }

  /**
   * The generated class of a message in a {@code java_multiple_files} proto: the Java package is
   * a prefix and the proto package, nested messages are inner classes. Checked against the
   * descriptor's own full name, so a wrong guess is never taken.
   */
  static Descriptor byConvention(String fullName) {
    String[] parts = fullName.split("\\.");
    int first = 0;
    while (first < parts.length && (parts[first].isEmpty()
        || !Character.isUpperCase(parts[first].charAt(0)))) {
      first++;
    }
    if (first == 0 || first == parts.length) {
      return null;
    }
    String pkg = String.join(".", java.util.Arrays.copyOfRange(parts, 0, first));
    String cls = String.join("$", java.util.Arrays.copyOfRange(parts, first, parts.length));
    ClassLoader loader = TypeResolver.class.getClassLoader();
    for (String prefix : JAVA_PREFIXES) {
      try {
        Object d = Class.forName(prefix + pkg + "." + cls, true, loader)
            .getMethod("getDescriptor").invoke(null);
        if (d instanceof Descriptor descriptor && descriptor.getFullName().equals(fullName)) {
          return descriptor;
        }
      } catch (ReflectiveOperationException | LinkageError e) {
        // not this prefix
      }
    }
    return null;
  }
}
