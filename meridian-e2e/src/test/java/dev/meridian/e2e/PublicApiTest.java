package dev.meridian.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Issue 22: the public API is small and stated. Every public type of the library modules outside
 * {@code dev.meridian.internal} is listed in docs/embedding.md, and everything listed exists and is
 * public: a new public type must be added to the list on purpose (or made internal).
 */
class PublicApiTest {
  static final List<String> LIBRARIES = List.of("meridian-protocol", "meridian-config",
      "meridian-etcd", "meridian-client", "meridian-server");
  static final Pattern LISTED = Pattern.compile("^- `(dev\\.meridian\\.[A-Za-z0-9_.]+)`\\s*$");

  @Test
  void everyPublicTypeOutsideInternalPackagesIsListedInTheEmbeddingGuide() throws Exception {
    Set<String> listed = listed();
    Set<String> found = new TreeSet<>();
    int scanned = 0;
    for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      if (LIBRARIES.stream().noneMatch(entry::contains)) {
        continue;
      }
      for (String className : classNames(Path.of(entry))) {
        scanned++;
        if (className.startsWith("dev.meridian.internal.") || !className.startsWith("dev.meridian.")) {
          continue;
        }
        Class<?> c = Class.forName(className, false, getClass().getClassLoader());
        if (effectivelyPublic(c)) {
          found.add(c.getCanonicalName());
        }
      }
    }
    // The scan must have seen the libraries, or it would pass by finding nothing.
    assertThat(scanned).as("classes scanned in %s", LIBRARIES).isGreaterThan(200);
    assertThat(found).as("public types not listed in docs/embedding.md (list them, or move them "
        + "to dev.meridian.internal)").isSubsetOf(listed);
    assertThat(listed).as("types docs/embedding.md lists that are not public types")
        .isSubsetOf(found);
  }

  /**
   * The public API names no implementation type: a public or protected member of a listed type
   * whose signature mentions {@code dev.meridian.internal} would make users depend on it.
   */
  @Test
  void noPublicSignatureMentionsAnInternalType() throws Exception {
    List<String> leaks = new ArrayList<>();
    for (String name : listed()) {
      Class<?> c = Class.forName(binaryName(name), false, getClass().getClassLoader());
      List<String> signatures = new ArrayList<>();
      for (var m : c.getDeclaredMethods()) {
        if ((Modifier.isPublic(m.getModifiers()) || Modifier.isProtected(m.getModifiers()))
            && !m.isSynthetic()) {
          signatures.add(m.toGenericString());
        }
      }
      for (var k : c.getDeclaredConstructors()) {
        if (Modifier.isPublic(k.getModifiers()) || Modifier.isProtected(k.getModifiers())) {
          signatures.add(k.toGenericString());
        }
      }
      for (var f : c.getDeclaredFields()) {
        if (Modifier.isPublic(f.getModifiers()) || Modifier.isProtected(f.getModifiers())) {
          signatures.add(f.toGenericString());
        }
      }
      if (c.getGenericSuperclass() != null) {
        signatures.add(name + " extends " + c.getGenericSuperclass().getTypeName());
      }
      for (var i : c.getGenericInterfaces()) {
        signatures.add(name + " implements " + i.getTypeName());
      }
      signatures.stream().filter(s -> s.contains("dev.meridian.internal.")).forEach(leaks::add);
    }
    assertThat(leaks).as("public signatures that mention internal types").isEmpty();
  }

  /** {@code a.b.Outer.Inner} → {@code a.b.Outer$Inner}. */
  static String binaryName(String canonical) {
    String[] parts = canonical.split("\\.");
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < parts.length; i++) {
      if (i > 0) {
        b.append(Character.isUpperCase(parts[i - 1].charAt(0)) ? '$' : '.');
      }
      b.append(parts[i]);
    }
    return b.toString();
  }

  static boolean effectivelyPublic(Class<?> c) {
    if (c.isAnonymousClass() || c.isLocalClass() || c.isSynthetic()) {
      return false;
    }
    for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
      if (!Modifier.isPublic(k.getModifiers())) {
        return false;
      }
    }
    return true;
  }

  static Set<String> listed() throws IOException {
    Set<String> names = new TreeSet<>();
    for (String line : Files.readAllLines(Path.of("..", "docs", "embedding.md"))) {
      Matcher m = LISTED.matcher(line);
      if (m.matches()) {
        names.add(m.group(1));
      }
    }
    assertThat(names).as("types listed in docs/embedding.md").hasSizeGreaterThan(10);
    return names;
  }

  static List<String> classNames(Path entry) throws IOException {
    List<String> names = new ArrayList<>();
    if (Files.isDirectory(entry)) {
      try (Stream<Path> files = Files.walk(entry)) {
        files.filter(p -> p.toString().endsWith(".class"))
            .forEach(p -> names.add(toClassName(entry.relativize(p).toString())));
      }
    } else if (entry.endsWith(".jar") || entry.toString().endsWith(".jar")) {
      try (JarFile jar = new JarFile(entry.toFile())) {
        jar.stream().map(e -> e.getName()).filter(n -> n.endsWith(".class"))
            .forEach(n -> names.add(toClassName(n)));
      }
    }
    names.removeIf(n -> n.endsWith("module-info") || n.endsWith("package-info"));
    return names;
  }

  static String toClassName(String path) {
    return path.substring(0, path.length() - ".class".length()).replace('\\', '/').replace('/', '.');
  }
}
