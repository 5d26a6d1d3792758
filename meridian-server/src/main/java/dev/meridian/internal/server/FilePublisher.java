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
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
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
 *
 * <p>The files may hold private keys, so (docs/security.md): files are 0600 and the directories
 * the publisher makes are 0700, set explicitly whatever the umask; Secrets are written only when
 * asked for ({@code --publish-secrets}); a link in the publish dir is never followed: a group
 * directory or published file that is a symbolic link is refused (logged, and the publish reported
 * failed), never written through. A publish that leaves any file not current is reported to the
 * {@link Reporter} (the hub's {@code /status} and {@code meridian_publish_failures_total}).
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

  /** Hears of every publish: {@code errors} empty when every file is current. */
  @FunctionalInterface
  public interface Reporter {
    void published(String dir, List<String> errors);

    Reporter NONE = (dir, errors) -> {};
  }

  /** Owner only: the files may hold private keys. */
  static final Set<PosixFilePermission> FILE_MODE =
      Set.copyOf(PosixFilePermissions.fromString("rw-------"));
  static final Set<PosixFilePermission> DIRECTORY_MODE =
      Set.copyOf(PosixFilePermissions.fromString("rwx------"));

  private final Path dir;
  private final Format format;
  private final ControlPlane controlPlane;
  private final boolean publishSecrets;
  private final Reporter reporter;
  /** Whether the file system has POSIX modes (not on Windows: there the directory's ACL rules). */
  private final boolean posix;
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
    this(dir, format, controlPlane, false, Reporter.NONE);
  }

  /**
   * As above; {@code publishSecrets}: also write each group's Secrets ({@code secrets.<ext>}),
   * private keys in plain text, whatever the config's {@code secret_access} says (a file has no
   * reader to check); false: no Secrets file, and one an earlier publish wrote is removed.
   */
  public FilePublisher(Path dir, Format format, ControlPlane controlPlane, boolean publishSecrets,
      Reporter reporter) {
    this.dir = dir;
    this.format = format;
    this.controlPlane = controlPlane;
    this.publishSecrets = publishSecrets;
    this.reporter = reporter;
    this.posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
  }

  /** The file a group's resources of a type are published to. */
  public static Path file(Path dir, String group, ResourceType type, Format format) {
    return dir.resolve(group).resolve(type.shortName() + "." + format.extension);
  }

  /**
   * Writes every group's files whose content changed, and removes groups no longer served. Returns
   * whether every file is current; what is not is logged and reported, never thrown.
   */
  public synchronized boolean publish(ServedConfig config) {
    List<String> errors = new ArrayList<>();
    try {
      publish(config, errors);
    } catch (IOException | RuntimeException e) {
      errors.add("cannot publish to " + dir + ": " + describe(e));
    }
    if (!errors.isEmpty()) {
      LOG.error(dev.meridian.internal.protocol.LogLine.of("publish").kv("result", "failed")
          .kv("dir", dir).kv("serving", "the new config over xDS; files not current")
          .kv("error", String.join("; ", errors)).toString());
    }
    reporter.published(dir.toString(), errors);
    return errors.isEmpty();
  }

  private static String describe(Exception e) {
    if (e instanceof java.nio.file.FileSystemException f) {
      return f.getMessage(); // names the file and the reason
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }

  private void publish(ServedConfig config, List<String> errors) throws IOException {
    publishDirectory();
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
      try {
        publishGroup(group, config, errors);
      } catch (IOException | RuntimeException e) {
        errors.add("group " + group + ": " + describe(e));
      }
    }
  }

  private void publishGroup(String group, ServedConfig config, List<String> errors)
      throws IOException {
    Path groupDir = dir.resolve(group);
    BasicFileAttributes a = lstat(groupDir);
    if (a == null) {
      Files.createDirectory(groupDir);
    } else if (a.isSymbolicLink()) {
      errors.add(groupDir + " is a symbolic link: not followed, group " + group
          + " not published");
      return;
    } else if (!a.isDirectory()) {
      errors.add(groupDir + " is not a directory: group " + group + " not published");
      return;
    }
    restrict(groupDir, DIRECTORY_MODE);
    boolean written = false;
    for (ResourceType type : ResourceType.values()) {
      if (!type.availableInSotw()) {
        continue;
      }
      if (type == ResourceType.SECRET && !publishSecrets) {
        written |= removeSecrets(groupDir);
        continue;
      }
      written |= write(file(dir, group, type, format),
          render(type, config.snapshot(group).get(type)), errors);
    }
    if (written) {
      // The renames reach the disk: a power loss after this keeps the new files.
      forceDirectory(groupDir);
    }
  }

  /**
   * The publish dir: made 0700 if missing; one that exists keeps its mode (it is the operator's),
   * but may not be a link.
   */
  private void publishDirectory() throws IOException {
    BasicFileAttributes a = lstat(dir);
    if (a == null) {
      Path parent = dir.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.createDirectory(dir);
      restrict(dir, DIRECTORY_MODE);
    } else if (a.isSymbolicLink()) {
      throw new IOException(dir + " is a symbolic link: not followed (give the directory's real"
          + " path)");
    } else if (!a.isDirectory()) {
      throw new IOException(dir + " is not a directory");
    }
  }

  /** A Secrets file of any format an earlier publish (with Secrets) left: its keys go. */
  private static boolean removeSecrets(Path groupDir) throws IOException {
    boolean removed = false;
    for (Format f : Format.values()) {
      Path p = groupDir.resolve(ResourceType.SECRET.shortName() + "." + f.extension);
      if (Files.deleteIfExists(p)) { // a link is removed itself, never followed
        LOG.info("removed {}: Secrets are published only with --publish-secrets", p);
        removed = true;
      }
    }
    return removed;
  }

  /** The attributes of {@code p} itself (a link is not followed); null if there is nothing. */
  private static BasicFileAttributes lstat(Path p) throws IOException {
    try {
      return Files.readAttributes(p, BasicFileAttributes.class,
          java.nio.file.LinkOption.NOFOLLOW_LINKS);
    } catch (java.nio.file.NoSuchFileException e) {
      return null;
    }
  }

  /** Sets {@code p}'s mode exactly (not through the umask), without following a link. */
  private void restrict(Path p, Set<PosixFilePermission> mode) throws IOException {
    if (!posix) {
      return;
    }
    PosixFileAttributeView v = Files.getFileAttributeView(p, PosixFileAttributeView.class,
        java.nio.file.LinkOption.NOFOLLOW_LINKS);
    if (!v.readAttributes().permissions().equals(mode)) {
      v.setPermissions(mode);
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
    // The JSON is this process's own rendering: no cap on its size (snakeyaml's default is 3 MiB,
    // which a config of some 15,000 clusters passes).
    LoaderOptions lo = new LoaderOptions();
    lo.setCodePointLimit(Integer.MAX_VALUE);
    Object tree = new Yaml(lo).load(json);
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

  /**
   * Writes {@code target} if its content differs; returns whether it did. A target that is a link
   * or no regular file is refused into {@code errors}, never followed.
   */
  private boolean write(Path target, byte[] content, List<String> errors) throws IOException {
    BasicFileAttributes a = lstat(target);
    if (a != null && a.isSymbolicLink()) {
      errors.add(target + " is a symbolic link: not followed, not written");
      return false;
    }
    if (a != null && !a.isRegularFile()) {
      errors.add(target + " is not a regular file: not written");
      return false;
    }
    if (a != null && a.size() == content.length && Arrays.equals(readOwn(target), content)) {
      restrict(target, FILE_MODE); // one an older version wrote readable by all
      return false; // unchanged: no write, no rename, nothing for Envoy to reload
    }
    Path tmp = temporary(target);
    // Whatever holds the temporary name (a link, a file of a killed publish) goes; the new one is
    // created, never opened through a link, and is 0600 before it holds a byte.
    Files.deleteIfExists(tmp);
    Set<java.nio.file.OpenOption> open = Set.of(StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE, java.nio.file.LinkOption.NOFOLLOW_LINKS);
    FileAttribute<?>[] mode = posix
        ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(FILE_MODE)}
        : new FileAttribute<?>[0];
    try (FileChannel ch = FileChannel.open(tmp, open, mode)) {
      restrict(tmp, FILE_MODE); // exactly: the umask may have taken the owner's bits too
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

  /** The bytes of a regular file, not through a link. */
  private static byte[] readOwn(Path p) throws IOException {
    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ,
        java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      return java.nio.channels.Channels.newInputStream(ch).readAllBytes();
    }
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
