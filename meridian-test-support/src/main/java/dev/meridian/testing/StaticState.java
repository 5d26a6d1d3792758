package dev.meridian.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * Finds static mutable state in Meridian's library classes (issue 22: "no static mutable state
 * anywhere: two embedded servers in one JVM are independent"). Every static field of every class
 * under {@code dev/meridian/} in the given classes' jars or class directories must be final and
 * hold a value that is immutable all the way down: primitives, strings, enums, records and final
 * Meridian classes of immutable values, {@code List.of}/{@code Set.of}/{@code Map.of} collections
 * of them, protobuf messages and descriptors, patterns, loggers, ... A field that cannot be so and
 * is still safe to share between servers is listed in {@link #ALLOWED}, with the reason.
 *
 * <p>The check looks at the values (the classes are initialized), not only the declared types:
 * a {@code static final List<String>} holding an {@code ArrayList} is mutable state.
 */
public final class StaticState {
  /**
   * Static fields that are mutable in form but not shared state between servers, with the reason.
   * Keyed {@code binary.class.Name#FIELD}. Keep it short: each entry is a claim to defend.
   */
  public static final Map<String, String> ALLOWED = Map.of(
      "dev.meridian.internal.config.JsonConfig#NOT_JSON",
      "a stackless control-flow exception without suppression or cause: it carries no data",
      "dev.meridian.internal.config.BlockYaml#DECLINE",
      "a stackless control-flow exception without suppression or cause: it carries no data",
      "dev.meridian.internal.config.YamlTree#SCHEMA",
      "a YAML schema: its resolver rules are fixed when it is built and only read after",
      "dev.meridian.internal.server.SharedNamesMarshaller#HANDOFF",
      "per thread, from one request's parse to its stream's onNext on that same thread; what it"
          + " holds names the server (marshaller) it came from, so servers share nothing");

  /**
   * Instance fields of Meridian classes that the check does not look into where it meets their
   * objects in a static (the shared empty snapshots), with the reason. The objects' other fields
   * are still checked. Keyed {@code binary.class.Name#field}.
   */
  public static final Map<String, String> ALLOWED_INSTANCE_FIELDS = Map.ofEntries(
      Map.entry("dev.meridian.internal.protocol.Snapshot#types",
          "private, built by the constructor, never written after"),
      Map.entry("dev.meridian.internal.protocol.TypeSnapshot#resources",
          "an unmodifiable view of a map built by the constructor and never written after"),
      Map.entry("dev.meridian.internal.protocol.TypeSnapshot#byName",
          "private, built by the constructor, never written after"),
      Map.entry("dev.meridian.internal.protocol.TypeSnapshot#byAlias",
          "private, built by the constructor, never written after"),
      Map.entry("dev.meridian.internal.protocol.TypeSnapshot#versionMap",
          "built lazily from the snapshot's own immutable contents: the same whoever asks first"),
      Map.entry("dev.meridian.internal.protocol.TypeSnapshot#sotwWhole",
          "built lazily from the snapshot's own immutable contents: the same whoever asks first"),
      Map.entry("dev.meridian.internal.protocol.TypeSnapshot#deltaWhole",
          "built lazily from the snapshot's own immutable contents: the same whoever asks first"),
      Map.entry("dev.meridian.internal.protocol.TypeSnapshot#deltaWholeNoTtl",
          "built lazily from the snapshot's own immutable contents: the same whoever asks first"));

  /**
   * Values of these classes (or their subclasses) are immutable. Named, not referenced: not every
   * module that runs the check has all of them on its classpath. (The protobuf type registries:
   * built once, final maps of immutable descriptors, only read; the one Meridian keeps,
   * EnvoyTypeRegistry's, is a function of the classpath, shared by every server in the JVM.)
   */
  private static final List<String> IMMUTABLE_TYPES = List.of(
      "java.lang.String", "java.lang.Boolean", "java.lang.Character", "java.lang.Byte",
      "java.lang.Short", "java.lang.Integer", "java.lang.Long", "java.lang.Float",
      "java.lang.Double", "java.lang.Class", "java.lang.Enum", "java.lang.System$Logger",
      // a logger: the logging backend's, process-wide by nature, holds no Meridian data
      "org.slf4j.Logger",
      "java.lang.invoke.VarHandle", "java.lang.invoke.MethodHandle",
      "java.math.BigInteger", "java.math.BigDecimal", "java.util.regex.Pattern",
      "java.time.Duration", "java.time.Instant", "java.time.LocalDate", "java.time.LocalTime",
      "java.time.LocalDateTime", "java.time.ZonedDateTime", "java.time.OffsetDateTime",
      "java.time.ZoneId", "java.time.Period", "java.nio.file.Path", "java.net.URI",
      "com.google.protobuf.MessageLite", "com.google.protobuf.ByteString",
      "com.google.protobuf.Descriptors$GenericDescriptor",
      "com.google.protobuf.Descriptors$FileDescriptor",
      "com.google.protobuf.util.JsonFormat$TypeRegistry", "com.google.protobuf.TypeRegistry",
      "io.grpc.Context$Key", "io.grpc.Metadata$Key", "io.grpc.Attributes$Key",
      "io.grpc.ServiceDescriptor",
      "io.grpc.MethodDescriptor", "io.grpc.Status",
      "org.snakeyaml.engine.v2.nodes.Tag");

  /** What a scan found. */
  public record Result(Set<Path> roots, int classes, int staticFields, List<String> problems,
      List<String> allowed) {}

  private StaticState() {}

  /**
   * Scans the jars or class directories that hold {@code anchors} (one class of each module to
   * check: its main classes, not its tests).
   */
  public static Result scan(Class<?>... anchors) {
    Set<Path> roots = new LinkedHashSet<>();
    for (Class<?> a : anchors) {
      roots.add(root(a));
    }
    ClassLoader loader = anchors[0].getClassLoader();
    List<String> problems = new ArrayList<>();
    List<String> allowed = new ArrayList<>();
    Set<String> names = new TreeSet<>();
    for (Path root : roots) {
      names.addAll(classNames(root));
    }
    int fields = 0;
    for (String name : names) {
      Class<?> c;
      try {
        c = Class.forName(name, true, loader);
      } catch (ReflectiveOperationException | LinkageError e) {
        problems.add(name + ": cannot be loaded and initialized to check: " + e);
        continue;
      }
      for (Field f : c.getDeclaredFields()) {
        if (!Modifier.isStatic(f.getModifiers()) || f.isSynthetic()) {
          continue; // instance state, or the compiler's ($VALUES of an enum, $assertionsDisabled)
        }
        fields++;
        String id = name + "#" + f.getName();
        String why = check(f);
        if (ALLOWED.containsKey(id)) {
          allowed.add(id);
          if (why == null) {
            problems.add(id + ": allowed as mutable in StaticState.ALLOWED, but is immutable now:"
                + " take it off the list");
          }
        } else if (why != null) {
          problems.add(id + ": " + why);
        }
      }
    }
    // An allowed field that is gone (renamed, removed) from a scanned class: keep the lists honest.
    for (String id : ALLOWED.keySet()) {
      String cls = id.substring(0, id.indexOf('#'));
      if (names.contains(cls) && !allowed.contains(id)) {
        problems.add(id + ": listed in StaticState.ALLOWED but not found: take it off the list");
      }
    }
    for (String id : ALLOWED_INSTANCE_FIELDS.keySet()) {
      String cls = id.substring(0, id.indexOf('#'));
      if (names.contains(cls) && !declares(cls, id.substring(id.indexOf('#') + 1), loader)) {
        problems.add(id + ": listed in StaticState.ALLOWED_INSTANCE_FIELDS but not found:"
            + " take it off the list");
      }
    }
    return new Result(Collections.unmodifiableSet(roots), names.size(), fields,
        List.copyOf(problems), List.copyOf(allowed));
  }

  private static boolean declares(String cls, String field, ClassLoader loader) {
    try {
      Field f = Class.forName(cls, false, loader).getDeclaredField(field);
      return !Modifier.isStatic(f.getModifiers());
    } catch (ReflectiveOperationException | LinkageError e) {
      return false;
    }
  }

  /** Why the static field {@code f} is mutable state, or null if it is not. */
  private static String check(Field f) {
    if (!Modifier.isFinal(f.getModifiers())) {
      return "not final";
    }
    if (f.getType().isPrimitive()) {
      return null;
    }
    Object value;
    try {
      f.setAccessible(true);
      value = f.get(null);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return "cannot be read to check: " + e;
    }
    return mutable(value, "", new IdentityHashMap<>());
  }

  /** Why {@code v} (reached at {@code path}) is not immutable all the way down, or null. */
  private static String mutable(Object v, String path, Map<Object, Boolean> seen) {
    if (v == null || seen.put(v, Boolean.TRUE) != null) {
      return null;
    }
    Class<?> c = v.getClass();
    if (c.isArray()) {
      return Array.getLength(v) == 0 ? null
          : "holds an array" + at(path) + " (arrays are mutable; use List.of or an instance field)";
    }
    if (c == Object.class) {
      return null; // a sentinel: no state
    }
    if (c.getName().startsWith("dev.meridian.")) {
      return ours(v, c, path, seen); // (lambdas too: their hidden classes are named after the host)
    }
    if (isImmutableType(c)) {
      return null;
    }
    if (c.getName().startsWith("java.util.ImmutableCollections$")) {
      if (v instanceof Map<?, ?> m) {
        for (Map.Entry<?, ?> e : m.entrySet()) {
          String why = first(mutable(e.getKey(), path + "{key}", seen),
              mutable(e.getValue(), path + "[" + e.getKey() + "]", seen));
          if (why != null) {
            return why;
          }
        }
        return null;
      }
      int i = 0;
      for (Object e : (Collection<?>) v) {
        String why = mutable(e, path + "[" + i++ + "]", seen);
        if (why != null) {
          return why;
        }
      }
      return null;
    }
    if (v instanceof Optional<?> o) {
      return o.isEmpty() ? null : mutable(o.get(), path + ".get()", seen);
    }
    if (c.isRecord()) {
      for (RecordComponent rc : c.getRecordComponents()) {
        String why = mutable(read(rc, v), path + "." + rc.getName(), seen);
        if (why != null) {
          return why;
        }
      }
      return null;
    }
    return "holds a " + c.getName() + at(path)
        + ", not known to be immutable (a mutable collection, a cache, a counter?)";
  }

  /** A Meridian class (record, enum, lambda, ...): immutable if its fields are all the way down. */
  private static String ours(Object v, Class<?> c, String path, Map<Object, Boolean> seen) {
    for (Class<?> k = c; k != Object.class && k != Enum.class && k != Record.class;
        k = k.getSuperclass()) {
      if (!k.getName().startsWith("dev.meridian.")) {
        return "holds a " + c.getName() + at(path) + ", which extends " + k.getName()
            + ", not known to be immutable";
      }
      for (Field f : k.getDeclaredFields()) {
        if (Modifier.isStatic(f.getModifiers())
            || ALLOWED_INSTANCE_FIELDS.containsKey(k.getName() + "#" + f.getName())) {
          continue; // checked where it is declared; or allowed, with the reason
        }
        String where = path + "." + f.getName();
        if (!Modifier.isFinal(f.getModifiers())) {
          return "holds a " + c.getName() + at(path) + " whose field " + f.getName()
              + " is not final";
        }
        if (f.getType().isPrimitive()) {
          continue;
        }
        Object fv;
        try {
          f.setAccessible(true);
          fv = f.get(v);
        } catch (ReflectiveOperationException | RuntimeException e) {
          return "holds a " + c.getName() + at(path) + " whose field " + f.getName()
              + " cannot be read to check: " + e;
        }
        String why = mutable(fv, where, seen);
        if (why != null) {
          return why;
        }
      }
    }
    return null;
  }

  private static Object read(RecordComponent rc, Object record) {
    try {
      var m = rc.getAccessor();
      m.setAccessible(true);
      return m.invoke(record);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new IllegalStateException("cannot read " + rc, e);
    }
  }

  private static boolean isImmutableType(Class<?> c) {
    if (c.isEnum() || c.isPrimitive() || VarHandle.class.isAssignableFrom(c)
        || MethodHandle.class.isAssignableFrom(c)) {
      return true;
    }
    for (Class<?> k = c; k != null; k = k.getSuperclass()) {
      if (IMMUTABLE_TYPES.contains(k.getName())) {
        return true;
      }
      for (Class<?> i : interfaces(k)) {
        if (IMMUTABLE_TYPES.contains(i.getName())) {
          return true;
        }
      }
    }
    return false;
  }

  private static Set<Class<?>> interfaces(Class<?> c) {
    Set<Class<?>> out = new LinkedHashSet<>();
    List<Class<?>> todo = new ArrayList<>(List.of(c.getInterfaces()));
    while (!todo.isEmpty()) {
      Class<?> i = todo.remove(todo.size() - 1);
      if (out.add(i)) {
        todo.addAll(List.of(i.getInterfaces()));
      }
    }
    return out;
  }

  private static String first(String a, String b) {
    return a != null ? a : b;
  }

  private static String at(String path) {
    return path.isEmpty() ? "" : " at " + path;
  }

  /** The jar or class directory {@code anchor} was loaded from. */
  private static Path root(Class<?> anchor) {
    try {
      return Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException | RuntimeException e) {
      throw new IllegalStateException("cannot locate the classes of " + anchor, e);
    }
  }

  /** The binary names of the classes under {@code dev/meridian/} in a jar or class directory. */
  private static Set<String> classNames(Path root) {
    Set<String> names = new TreeSet<>();
    try {
      if (Files.isDirectory(root)) {
        try (Stream<Path> s = Files.walk(root)) {
          s.map(p -> root.relativize(p).toString().replace('\\', '/'))
              .filter(StaticState::isMeridianClass)
              .forEach(p -> names.add(className(p)));
        }
      } else {
        try (JarFile jar = new JarFile(root.toFile())) {
          for (JarEntry e : Collections.list(jar.entries())) {
            if (isMeridianClass(e.getName())) {
              names.add(className(e.getName()));
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the classes in " + root, e);
    }
    return names;
  }

  private static boolean isMeridianClass(String path) {
    return path.startsWith("dev/meridian/") && path.endsWith(".class")
        && !path.endsWith("module-info.class") && !path.endsWith("package-info.class");
  }

  private static String className(String path) {
    return path.substring(0, path.length() - ".class".length()).replace('/', '.');
  }

  /** The problems, one a line, for a failed assertion's message. */
  public static String describe(Result r) {
    return String.join("\n", new TreeSet<>(r.problems()));
  }
}
