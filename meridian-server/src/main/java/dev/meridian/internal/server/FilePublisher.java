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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
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
      config.groupNames().forEach(groups::add);
      try (Stream<Path> s = Files.list(dir)) {
        for (Path p : s.filter(Files::isDirectory).toList()) {
          if (!groups.contains(p.getFileName().toString())) {
            removeGroup(p);
          }
        }
      }
      for (String group : groups) {
        for (ResourceType type : ResourceType.values()) {
          if (type.availableInSotw()) {
            write(file(dir, group, type, format), render(type, config.snapshot(group).get(type)));
          }
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

  private static void write(Path target, byte[] content) throws IOException {
    if (Files.exists(target) && Arrays.equals(Files.readAllBytes(target), content)) {
      return; // unchanged: no write, no rename, nothing for Envoy to reload
    }
    Files.createDirectories(target.getParent());
    Path tmp = target.resolveSibling("." + target.getFileName() + ".tmp");
    Files.write(tmp, content);
    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private static void removeGroup(Path groupDir) throws IOException {
    try (Stream<Path> s = Files.list(groupDir)) {
      for (Path p : s.toList()) {
        Files.deleteIfExists(p);
      }
    }
    Files.deleteIfExists(groupDir);
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
