package dev.meridian.internal.protocol;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * Knows every message of Envoy's API (and the xds/udpa/validate protos it uses), so that proto3
 * JSON with nested {@code Any}s (typed_config, ...) can be read and written. Built once, lazily, by
 * scanning the generated file descriptors that ship beside the Envoy classes.
 */
public final class EnvoyTypeRegistry {
  private static final List<String> PACKAGES = List.of(
      "io/envoyproxy/", "com/github/xds/", "com/github/udpa/", "xds/", "udpa/", "envoy/",
      "validate/", "com/google/api/", "com/google/rpc/", "dev/cel/", "cel/", "io/opentelemetry/",
      "io/prometheus/");

  /**
   * The one registry of the process, built on first use (the JVM's lazy class initialization).
   * Shared by every server in the JVM, and safely so: it is a function of the classpath, built
   * once and never written after (immutable descriptors and type registries).
   */
  private static final class Holder {
    static final EnvoyTypeRegistry INSTANCE = new EnvoyTypeRegistry(scan());
  }

  private final JsonFormat.TypeRegistry typeRegistry;
  private final com.google.protobuf.TypeRegistry protoTypeRegistry;
  private final Map<String, Descriptor> byFullName;

  private EnvoyTypeRegistry(List<FileDescriptor> files) {
    JsonFormat.TypeRegistry.Builder b = JsonFormat.TypeRegistry.newBuilder();
    Map<String, Descriptor> names = new HashMap<>();
    Set<String> seen = new HashSet<>();
    for (FileDescriptor f : files) {
      collect(f, names, seen);
    }
    b.add(names.values());
    this.typeRegistry = b.build();
    this.protoTypeRegistry = com.google.protobuf.TypeRegistry.newBuilder().add(names.values()).build();
    this.byFullName = Map.copyOf(names);
  }

  public static EnvoyTypeRegistry get() {
    return Holder.INSTANCE;
  }

  public JsonFormat.TypeRegistry typeRegistry() {
    return typeRegistry;
  }

  /** The same types for text format (expanded {@code Any}s). */
  public com.google.protobuf.TypeRegistry protoTypeRegistry() {
    return protoTypeRegistry;
  }

  /** The message descriptor for a full name such as {@code envoy.config.cluster.v3.Cluster}. */
  public Descriptor find(String fullName) {
    return byFullName.get(fullName);
  }

  public int size() {
    return byFullName.size();
  }

  /** Every message type it knows (map entries aside), for checks that must see them all. */
  public java.util.Collection<Descriptor> descriptors() {
    return byFullName.values();
  }

  public JsonFormat.Parser parser() {
    return JsonFormat.parser().usingTypeRegistry(typeRegistry);
  }

  public JsonFormat.Printer printer() {
    return JsonFormat.printer().usingTypeRegistry(typeRegistry).preservingProtoFieldNames();
  }

  private static void collect(FileDescriptor f, Map<String, Descriptor> names, Set<String> seen) {
    if (!seen.add(f.getName())) {
      return;
    }
    for (Descriptor d : f.getMessageTypes()) {
      collect(d, names);
    }
    for (FileDescriptor dep : f.getDependencies()) {
      collect(dep, names, seen);
    }
  }

  private static void collect(Descriptor d, Map<String, Descriptor> names) {
    if (d.getOptions().getMapEntry()) {
      return;
    }
    names.put(d.getFullName(), d);
    for (Descriptor nested : d.getNestedTypes()) {
      collect(nested, names);
    }
  }

  /** Every generated outer class ({@code *Proto}/{@code *OuterClass}) beside Envoy's classes. */
  private static List<FileDescriptor> scan() {
    List<FileDescriptor> files = new ArrayList<>();
    ClassLoader loader = Cluster.class.getClassLoader();
    for (String className : outerClassNames()) {
      try {
        Class<?> c = Class.forName(className, false, loader);
        Method m = c.getMethod("getDescriptor");
        if (Modifier.isStatic(m.getModifiers()) && m.getReturnType() == FileDescriptor.class) {
          files.add((FileDescriptor) m.invoke(null));
        }
      } catch (ReflectiveOperationException | LinkageError e) {
        // Not a generated outer class (or an optional dependency is absent): skip it.
      }
    }
    return files;
  }

  private static List<String> outerClassNames() {
    List<String> names = new ArrayList<>();
    try {
      Path location = Path.of(Cluster.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (Files.isDirectory(location)) {
        try (Stream<Path> s = Files.walk(location)) {
          s.map(p -> location.relativize(p).toString().replace('\\', '/'))
              .filter(EnvoyTypeRegistry::isCandidate)
              .forEach(p -> names.add(toClassName(p)));
        }
      } else {
        try (JarFile jar = new JarFile(location.toFile())) {
          Enumeration<JarEntry> entries = jar.entries();
          while (entries.hasMoreElements()) {
            String n = entries.nextElement().getName();
            if (isCandidate(n)) {
              names.add(toClassName(n));
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list Envoy's API classes", e);
    } catch (URISyntaxException e) {
      throw new IllegalStateException("cannot locate Envoy's API classes", e);
    }
    return names;
  }

  private static boolean isCandidate(String path) {
    if (!path.endsWith(".class") || path.indexOf('$') >= 0) {
      return false;
    }
    boolean inPackage = false;
    for (String p : PACKAGES) {
      if (path.startsWith(p)) {
        inPackage = true;
        break;
      }
    }
    return inPackage && (path.endsWith("Proto.class") || path.endsWith("OuterClass.class")
        || path.endsWith("Protos.class"));
  }

  private static String toClassName(String path) {
    return path.substring(0, path.length() - ".class".length()).replace('/', '.');
  }
}
