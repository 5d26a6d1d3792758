package dev.meridian.internal.config;

import dev.meridian.internal.protocol.LogLine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * What a config directory holds besides the files read ({@link ConfigLoader#files}): what looks
 * meant as config and is not read is a warning (a subdirectory, a file named almost like a config
 * file, a link to nothing), anything else is only named, so that no file is skipped silently.
 * Names starting with {@code .} are left out, as the loader leaves them (Kubernetes ConfigMap
 * mounts keep their own files there).
 */
public final class ConfigDirectory {
  /** How many config files of a subdirectory a warning names; the rest are counted. */
  private static final int NAMED = 5;
  /** How deep a subdirectory is searched for config files to name. */
  private static final int DEPTH = 8;

  private ConfigDirectory() {}

  /** What is at a config path: the files read, what is not read, and the warnings. */
  public record Listing(List<Path> read, List<Path> ignored, List<NotRead> warnings) {}

  /**
   * Something in a config directory that is not read although it looks meant as config, and
   * why; logged as the {@code config_not_read} line that {@code validate} prints too.
   */
  public record NotRead(Path path, String reason, String fix) {
    public String logLine() {
      return LogLine.of("config_not_read").kv("path", path).kv("reason", reason).kv("fix", fix)
          .toString();
    }

    @Override
    public String toString() {
      return logLine();
    }
  }

  /** The listing of {@code path}: for a file, that file alone, nothing ignored, no warning. */
  public static Listing scan(Path path) throws ConfigException {
    List<Path> read = ConfigLoader.files(path);
    if (!Files.isDirectory(path)) {
      return new Listing(read, List.of(), List.of());
    }
    List<Path> ignored = new ArrayList<>();
    List<NotRead> warnings = new ArrayList<>();
    List<Path> entries;
    try (Stream<Path> s = Files.list(path)) {
      entries = s.sorted().toList();
    } catch (IOException e) {
      return new Listing(read, List.of(), List.of()); // the loader said why it cannot list it
    }
    java.util.Set<Path> reading = new java.util.HashSet<>(read);
    for (Path p : entries) {
      String name = p.getFileName().toString();
      if (name.startsWith(".") || reading.contains(p)) {
        continue;
      }
      String keep = "start its name with '.' to keep it unread without this warning";
      if (Files.isDirectory(p)) {
        List<Path> inside = configFilesIn(p);
        String holds = inside.isEmpty() ? "" : "; it holds " + names(path, inside);
        warnings.add(new NotRead(p, "a subdirectory, not read: a config directory's own files "
            + "are read, not its subdirectories'" + holds,
            inside.isEmpty() ? keep : "move its files up into " + path + ", or " + keep));
      } else if (ConfigLoader.isConfigName(p.getFileName())) {
        boolean dangling = Files.isSymbolicLink(p) && !Files.exists(p);
        warnings.add(new NotRead(p, dangling
            ? "not read: a symbolic link to " + target(p) + ", which does not exist"
            : "not read: not a regular file", dangling ? "point it at a file" : keep));
      } else if (nearlyConfig(name)) {
        warnings.add(new NotRead(p, "not read: only names ending in .yaml, .yml or .json are "
            + "read", "rename it to end in one of them, or " + keep));
      } else {
        ignored.add(p);
      }
    }
    return new Listing(read, List.copyOf(ignored), List.copyOf(warnings));
  }

  /**
   * A name that a config file could have had: {@code x.yaml.bak}, {@code x.yaml~},
   * {@code x.ymal}, {@code x.jsonc}, a template's {@code x.yaml.j2}.
   */
  static boolean nearlyConfig(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    for (String ext : List.of(".yaml", ".yml", ".json")) {
      if (n.contains(ext + ".") || n.endsWith(ext + "~")) {
        return true;
      }
    }
    int dot = n.lastIndexOf('.');
    if (dot <= 0) {
      return false;
    }
    String ext = n.substring(dot + 1);
    // One edit from yaml or json (not from yml: xml is one edit from it, and no config file).
    return Suggest.distance(ext, "yaml") <= 1 || Suggest.distance(ext, "json") <= 1;
  }

  /** The config-named files under {@code dir}, hidden ones left out, in order. */
  private static List<Path> configFilesIn(Path dir) {
    try (Stream<Path> s = Files.walk(dir, DEPTH)) {
      return s.filter(p -> !p.equals(dir))
          .filter(p -> {
            for (Path part : dir.relativize(p)) {
              if (part.toString().startsWith(".")) {
                return false;
              }
            }
            return true;
          })
          .filter(p -> ConfigLoader.isConfigName(p.getFileName()) && Files.isRegularFile(p))
          .sorted().toList();
    } catch (IOException | java.io.UncheckedIOException e) {
      return List.of(); // unreadable below: the warning still names the subdirectory
    }
  }

  /** {@code sub/a.yaml, sub/b.json and 3 more}, relative to the config directory. */
  private static String names(Path base, List<Path> files) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < Math.min(files.size(), NAMED); i++) {
      sb.append(i == 0 ? "" : ", ").append(relative(base, files.get(i)));
    }
    if (files.size() > NAMED) {
      sb.append(" and ").append(files.size() - NAMED).append(" more");
    }
    return sb.toString();
  }

  /** {@code file} relative to {@code dir}, whether either was given absolute or not. */
  public static Path relative(Path dir, Path file) {
    return dir.toAbsolutePath().relativize(file.toAbsolutePath());
  }

  private static String target(Path link) {
    try {
      return Files.readSymbolicLink(link).toString();
    } catch (IOException e) {
      return "a target that cannot be read";
    }
  }

  /** A config path's files as a log value: names relative to a directory, comma-separated. */
  public static String names(Path path, List<Path> files, int max) {
    boolean directory = Files.isDirectory(path);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < Math.min(files.size(), max); i++) {
      Path f = files.get(i);
      sb.append(i == 0 ? "" : ",").append(directory ? relative(path, f) : f.getFileName());
    }
    if (files.size() > max) {
      sb.append(",+").append(files.size() - max).append(" more");
    }
    return sb.toString();
  }
}
