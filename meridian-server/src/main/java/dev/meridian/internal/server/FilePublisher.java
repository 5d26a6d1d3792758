package dev.meridian.internal.server;

import com.google.protobuf.util.JsonFormat;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.TypeSnapshot;
import dev.meridian.internal.protocol.XdsResource;
import io.envoyproxy.envoy.config.core.v3.ControlPlane;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * Publishes the served config for filesystem subscriptions (spec "Filesystem subscriptions"):
 * {@code DIR/<group>/<type>.<ext>} holds a DiscoveryResponse of the group's resources of that type.
 * Files are written to a temporary file in the same directory and renamed into place (Envoy
 * watches moves), and only when their content changed.
 *
 * <p>Nothing lost (issue 25, docs/reliability.md): a process killed at any moment leaves each
 * published file whole, old or new. The temporary file is {@code .<type>.<ext>.tmp} beside its
 * target (hidden, and no {@code *.yaml} glob matches it), written and forced to disk before the
 * rename, and the directory is forced after it; a group no longer served is first renamed to
 * {@code .<group>.removing} (its files vanish together), then deleted. A publisher's first publish
 * removes what a killed one left: its temporary files and {@code .removing} directories.
 */
public final class FilePublisher {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.server.publish");

  /** The formats Envoy's path config sources read. */
  public enum Format {
    YAML("yaml"), JSON("json"), PB("pb");

    final String extension;

    Format(String extension) {
      this.extension = extension;
    }
  }

  private final Path dir;
  private final Format format;
  private final ControlPlane controlPlane;
  private final JsonFormat.Printer printer = EnvoyTypeRegistry.get().printer();
  /** Whether what a killed publisher left has been removed (on this publisher's first publish). */
  private boolean swept;
  /** Groups whose names cannot be directories here, each logged once. */
  private final Set<String> refused = new HashSet<>();
  /** Directories of the publish dir that are no group of ours, each logged once. */
  private final Set<String> foreign = new HashSet<>();

  /** Files that name no control plane. */
  public FilePublisher(Path dir, Format format) {
    this(dir, format, null);
  }

  /**
   * Files whose DiscoveryResponses carry {@code controlPlane} (issue 21: every response names the
   * server that wrote it; the hub's); null: left out.
   */
  public FilePublisher(Path dir, Format format, ControlPlane controlPlane) {
    this.dir = dir;
    this.format = format;
    this.controlPlane = controlPlane;
  }

  /** The file a group's resources of a type are published to. */
  public static Path file(Path dir, String group, ResourceType type, Format format) {
    return dir.resolve(group).resolve(type.shortName() + "." + format.extension);
  }

  /** Writes every group's files whose content changed, and removes groups no longer served. */
  public synchronized void publish(ServedConfig config) {
    try {
      Files.createDirectories(dir);
      Set<String> groups = new HashSet<>();
      for (String g : config.groupNames()) {
        if (isDirectoryName(g)) {
          groups.add(g);
        } else if (refused.add(g)) {
          LOG.error("group {} is not published to {}: its name is not a directory name there"
              + " (empty, '.', '..', a leading '.', '/', '\\' or a control character)", g, dir);
        }
      }
      if (!swept) {
        sweep(groups);
        swept = true;
      }
      boolean removed = false;
      try (Stream<Path> s = Files.list(dir)) {
        for (Path p : s.filter(FilePublisher::isRealDirectory).toList()) {
          String name = p.getFileName().toString();
          if (!groups.contains(name) && !refused.contains(name)) {
            if (isOwnGroup(p)) {
              removed |= removeGroup(p);
            } else if (foreign.add(name)) {
              LOG.warn("{} is not a served group but holds files Meridian did not write: left as"
                  + " it is", p);
            }
          }
        }
      }
      if (removed) {
        forceDirectory(dir);
      }
      for (String group : groups) {
        boolean written = false;
        for (ResourceType type : ResourceType.values()) {
          if (type.availableInSotw()) {
            written |= write(file(dir, group, type, format),
                render(type, config.snapshot(group).get(type)));
          }
        }
        if (written) {
          // The renames reach the disk: a power loss after this keeps the new files.
          forceDirectory(dir.resolve(group));
        }
      }
    } catch (IOException e) {
      LOG.error("cannot publish to {}: {}", dir, e.getMessage());
    }
  }

  byte[] render(ResourceType type, TypeSnapshot snapshot) {
    DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder()
        .setVersionInfo(snapshot.version()).setTypeUrl(type.typeUrl());
    if (controlPlane != null) {
      b.setControlPlane(controlPlane);
    }
    for (XdsResource r : snapshot.resources().values()) {
      b.addResources(r.any());
    }
    DiscoveryResponse response = b.build();
    try {
      return switch (format) {
        case PB -> response.toByteArray();
        case JSON -> (printer.print(response) + "\n").getBytes(StandardCharsets.UTF_8);
        case YAML -> yaml(printer.print(response)).getBytes(StandardCharsets.UTF_8);
      };
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String yaml(String json) {
    Object tree = new Yaml(new LoaderOptions()).load(json);
    DumperOptions o = new DumperOptions();
    o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
    o.setIndent(2);
    o.setWidth(200);
    return new Yaml(o).dump(tree);
  }

  /** The temporary file {@code target} is written to before it is renamed into place. */
  static Path temporary(Path target) {
    return target.resolveSibling("." + target.getFileName() + TMP);
  }

  private static final String TMP = ".tmp";
  private static final String REMOVING = ".removing";

  /**
   * Whether a group's name can be its directory: one path segment, not hidden (the publisher's
   * own hidden names are its temporary ones), nothing a file system would read as a path.
   */
  static boolean isDirectoryName(String group) {
    if (group.isEmpty() || group.startsWith(".") || group.length() > 255) {
      return false;
    }
    for (int i = 0; i < group.length(); i++) {
      char c = group.charAt(i);
      if (c == '/' || c == '\\' || c < 0x20 || c == 0x7f) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether a directory holds only files a publisher writes (published files of any format,
   * temporary files): only such a directory is removed when its group is no longer served, so a
   * directory of the user's in the publish dir is never deleted.
   */
  static boolean isOwnGroup(Path groupDir) throws IOException {
    if (!isRealDirectory(groupDir)) {
      return false; // a link: whatever it points to is not the publisher's
    }
    boolean published = false;
    try (Stream<Path> s = Files.list(groupDir)) {
      for (Path p : s.toList()) {
        String name = p.getFileName().toString();
        if (!Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)
            || !(isPublished(name) || isTemporary(name))) {
          return false;
        }
        published |= isPublished(name);
      }
    }
    return published; // an empty directory was made by someone else: a group always has files
  }

  private static boolean isEmpty(Path d) throws IOException {
    try (Stream<Path> s = Files.list(d)) {
      return s.findAny().isEmpty();
    }
  }

  /** A directory, not a link to one. */
  private static boolean isRealDirectory(Path p) {
    return Files.isDirectory(p, java.nio.file.LinkOption.NOFOLLOW_LINKS);
  }

  private static boolean isPublished(String name) {
    for (ResourceType type : ResourceType.values()) {
      for (Format f : Format.values()) {
        if (name.equals(type.shortName() + "." + f.extension)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Whether {@code name} is one of this publisher's temporary file names, whatever the format. */
  static boolean isTemporary(String name) {
    return name.startsWith(".") && name.endsWith(TMP)
        && isPublished(name.substring(1, name.length() - TMP.length()));
  }

  /**
   * Removes what a publisher killed mid-write left: temporary files in the groups' directories and
   * groups renamed for removal. Only names of this class's own making are touched.
   */
  private void sweep(Set<String> groups) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : s.filter(FilePublisher::isRealDirectory).toList()) {
        String name = p.getFileName().toString();
        if (name.startsWith(".") && name.endsWith(REMOVING)) {
          if (!deleteOwnDirectory(p) && foreign.add(name)) {
            LOG.warn("{} holds files Meridian did not write: left as it is", p);
          }
        } else if (groups.contains(name)) {
          try (Stream<Path> files = Files.list(p)) {
            for (Path f : files.toList()) {
              if (isTemporary(f.getFileName().toString())) {
                LOG.info("removing {}: left by a publish that did not finish", f);
                Files.deleteIfExists(f);
              }
            }
          }
        }
      }
    }
  }

  /** Writes {@code target} if its content differs; returns whether it did. */
  private static boolean write(Path target, byte[] content) throws IOException {
    if (Files.exists(target) && Arrays.equals(Files.readAllBytes(target), content)) {
      return false; // unchanged: no write, no rename, nothing for Envoy to reload
    }
    Files.createDirectories(target.getParent());
    Path tmp = temporary(target);
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE,
        StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
      ByteBuffer b = ByteBuffer.wrap(content);
      while (b.hasRemaining()) {
        ch.write(b);
      }
      // The content is on disk before the rename makes it the file: after a power loss the file
      // is the old one or the new one, never the new name with blocks missing.
      ch.force(true);
    }
    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return true;
  }

  /**
   * A group no longer served: renamed to a hidden name first (one atomic step, so its files vanish
   * together, never some of them), then deleted. Returns whether it went: not while a directory of
   * someone else's holds the hidden name.
   */
  private boolean removeGroup(Path groupDir) throws IOException {
    String name = groupDir.getFileName().toString();
    if (name.startsWith(".") && name.endsWith(REMOVING)) {
      return deleteOwnDirectory(groupDir); // one a killed publisher was removing
    }
    Path removing = groupDir.resolveSibling("." + name + REMOVING);
    if (Files.exists(removing, java.nio.file.LinkOption.NOFOLLOW_LINKS)
        && !deleteOwnDirectory(removing)) {
      if (foreign.add(removing.getFileName().toString())) {
        LOG.warn("{} is not served any more but stays: {} holds files Meridian did not write",
            groupDir, removing);
      }
      return false;
    }
    Files.move(groupDir, removing, StandardCopyOption.ATOMIC_MOVE);
    return deleteOwnDirectory(removing);
  }

  /**
   * Deletes a directory that is empty or holds nothing but a publisher's files; anything else (a
   * link, a file or directory of someone else's) is left untouched and false returned.
   */
  private static boolean deleteOwnDirectory(Path d) throws IOException {
    if (!isRealDirectory(d) || !(isEmpty(d) || isOwnGroup(d))) {
      return false;
    }
    try (Stream<Path> s = Files.list(d)) {
      for (Path p : s.toList()) {
        Files.deleteIfExists(p);
      }
    }
    Files.deleteIfExists(d);
    return true;
  }

  /** fsync of a directory, so renames in it survive a power loss; where unsupported, skipped. */
  private static void forceDirectory(Path d) {
    try (FileChannel ch = FileChannel.open(d, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException e) {
      // Some platforms (Windows) cannot open a directory: the renames are still atomic.
    }
  }

  /** Publishes on every config change. */
  DiscoveryHub.Listener listener() {
    return new DiscoveryHub.Listener() {
      @Override
      public void onConfig(ServedConfig config, Map<String, Map<ResourceType, Set<String>>> changes,
          long generation) {
        publish(config);
      }

      @Override
      public void onTick(ServedConfig config) {}
    };
  }
}
