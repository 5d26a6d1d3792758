package dev.meridian.bench;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.TypeRegistry;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The benchmark's resources, identical for both servers: {@code clusters} EDS clusters named
 * {@code cluster-<i>} and one ClusterLoadAssignment each with {@code endpoints} endpoints. The
 * generation of every cluster ({@link #changeAllClusters}) is its connect timeout in seconds; the
 * generation of an endpoint set ({@link #changeEndpoints}) is the port of its endpoints.
 */
public final class Fleet {
  public static final String PREFIX = "cluster-";
  public static final int BASE_PORT = 10000;

  private final int clusters;
  private final int endpoints;
  private int clusterGen = 1;
  private final int[] endpointGen;

  public Fleet(int clusters, int endpoints) {
    this.clusters = clusters;
    this.endpoints = endpoints;
    this.endpointGen = new int[clusters];
  }

  public int clusters() {
    return clusters;
  }

  public int clusterGen() {
    return clusterGen;
  }

  public int endpointGen(int i) {
    return endpointGen[i];
  }

  public void changeAllClusters() {
    clusterGen++;
  }

  public void changeEndpoints(int i) {
    endpointGen[i]++;
  }

  /** Changes every endpoint set (each push then carries all of them). */
  public void changeAllEndpoints() {
    for (int i = 0; i < clusters; i++) {
      endpointGen[i]++;
    }
  }

  public static String name(int i) {
    return PREFIX + i;
  }

  public static int portFor(int gen) {
    return BASE_PORT + gen;
  }

  public Cluster cluster(int i) {
    return Cluster.newBuilder().setName(name(i))
        .setType(Cluster.DiscoveryType.EDS)
        .setConnectTimeout(Duration.newBuilder().setSeconds(clusterGen))
        .setLbPolicy(Cluster.LbPolicy.ROUND_ROBIN)
        .setEdsClusterConfig(Cluster.EdsClusterConfig.newBuilder().setEdsConfig(
            ConfigSource.newBuilder().setAds(AggregatedConfigSource.getDefaultInstance())
                .setResourceApiVersion(ApiVersion.V3)))
        .build();
  }

  public ClusterLoadAssignment endpoints(int i) {
    LocalityLbEndpoints.Builder l = LocalityLbEndpoints.newBuilder();
    for (int e = 0; e < endpoints; e++) {
      String ip = address(i, e);
      l.addLbEndpoints(LbEndpoint.newBuilder().setEndpoint(Endpoint.newBuilder().setAddress(
          Address.newBuilder().setSocketAddress(SocketAddress.newBuilder().setAddress(ip)
              .setPortValue(portFor(endpointGen[i]))))));
    }
    return ClusterLoadAssignment.newBuilder().setClusterName(name(i)).addEndpoints(l).build();
  }

  public List<Cluster> allClusters() {
    List<Cluster> list = new ArrayList<>(clusters);
    for (int i = 0; i < clusters; i++) {
      list.add(cluster(i));
    }
    return list;
  }

  public List<ClusterLoadAssignment> allEndpoints() {
    List<ClusterLoadAssignment> list = new ArrayList<>(clusters);
    for (int i = 0; i < clusters; i++) {
      list.add(endpoints(i));
    }
    return list;
  }

  /** Writes the Meridian config atomically: {@link #prepareMeridianConfig}, then rename. */
  public void writeMeridianConfig(Path file) {
    commitMeridianConfig(prepareMeridianConfig(file), file);
  }

  /** Writes the Meridian config (JSON, one resource per line) next to {@code file}; returns it. */
  public Path prepareMeridianConfig(Path file) {
    JsonFormat.Printer printer = JsonFormat.printer().omittingInsignificantWhitespace()
        .usingTypeRegistry(TypeRegistry.newBuilder().add(Cluster.getDescriptor())
            .add(ClusterLoadAssignment.getDescriptor()).build());
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
      w.write("{\"resources\":[\n");
      for (int i = 0; i < clusters; i++) {
        w.write(printer.print(Any.pack(cluster(i))));
        w.write(",\n");
        w.write(printer.print(Any.pack(endpoints(i))));
        w.write(i == clusters - 1 ? "\n" : ",\n");
      }
      w.write("]}\n");
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException(e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return tmp;
  }

  /** Writes the YAML config atomically: {@link #prepareMeridianYaml}, then rename. */
  public void writeMeridianYaml(Path file) {
    commitMeridianConfig(prepareMeridianYaml(file), file);
  }

  /**
   * Writes the same resources as a YAML config the way a user writes one (docs/config.md,
   * examples/quickstart.yaml): one {@code - "@type": ...} item per resource, nested mappings in
   * block style, 2-space indent, next to {@code file}; returns it. Issue 23: measure what users
   * run, not a strict-JSON file that parses faster.
   */
  public Path prepareMeridianYaml(Path file) {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
      w.write("# " + clusters + " EDS clusters with " + endpoints
          + " endpoints each (meridian-bench)\nresources:\n");
      for (int i = 0; i < clusters; i++) {
        w.write("""
              - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
                name: %s
                type: EDS
                connect_timeout: %ds
                lb_policy: ROUND_ROBIN
                eds_cluster_config:
                  eds_config:
                    ads: {}
                    resource_api_version: V3
              - "@type": type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment
                cluster_name: %s
                endpoints:
                  - lb_endpoints:
            """.formatted(name(i), clusterGen, name(i)));
        for (int e = 0; e < endpoints; e++) {
          w.write("""
                        - endpoint:
                            address:
                              socket_address:
                                address: %s
                                port_value: %d
              """.formatted(address(i, e), portFor(endpointGen[i])));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return tmp;
  }

  private static String address(int i, int e) {
    return "10." + ((i >> 8) & 0xff) + "." + (i & 0xff) + "." + (e + 1);
  }

  /** Renames a prepared config over {@code file} (one inotify event, never a half-written file). */
  public static void commitMeridianConfig(Path tmp, Path file) {
    try {
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
