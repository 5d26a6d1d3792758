package dev.meridian.bench.jmh;

import dev.meridian.bench.Fleet;
import dev.meridian.internal.protocol.DeltaStream;
import dev.meridian.internal.protocol.Outcome;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.Sharing;
import dev.meridian.internal.protocol.Snapshot;
import dev.meridian.internal.protocol.SotwStream;
import dev.meridian.internal.protocol.Versions;
import dev.meridian.internal.protocol.XdsResource;
import dev.meridian.internal.protocol.XdsStream;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Hot paths of a push, at fleet scale: the diff computed once per reload, the per-stream response
 * assembly every client pays, and the hashing every new resource version pays. Run with
 * {@code java -jar meridian-bench/target/meridian-bench.jar CoreBenchmarks}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g"})
@State(Scope.Thread)
public class CoreBenchmarks {
  static final String CDS = ResourceType.CLUSTER.typeUrl();
  static final String EDS = ResourceType.ENDPOINT.typeUrl();

  @Param({"10000"})
  int clusters;

  Fleet fleet;
  List<XdsResource> base;
  Snapshot a;
  Snapshot oneEndpointChanged;
  Snapshot allClustersChanged;
  ServedConfig configA;
  ServedConfig configB;
  Map<String, Map<ResourceType, Set<String>>> changesAtoB;
  Map<String, Map<ResourceType, Set<String>>> changesBtoA;
  Cluster oneCluster;
  TreeMap<String, String> view;
  SotwStream sotw;
  DeltaStream delta;
  boolean atA;

  @Setup(Level.Trial)
  public void setUp() {
    fleet = new Fleet(clusters, 2);
    base = resources(fleet);
    a = Snapshot.of(base);
    int k = clusters / 2;
    List<XdsResource> one = new ArrayList<>(base);
    fleet.changeEndpoints(k);
    one.set(2 * k + 1, XdsResource.of(ResourceType.ENDPOINT, fleet.endpoints(k)));
    oneEndpointChanged = Snapshot.of(one);
    fleet.changeAllClusters();
    List<XdsResource> all = new ArrayList<>(base);
    for (int i = 0; i < clusters; i++) {
      all.set(2 * i, XdsResource.of(ResourceType.CLUSTER, fleet.cluster(i)));
    }
    allClustersChanged = Snapshot.of(all);
    oneCluster = fleet.cluster(k);
    view = new TreeMap<>();
    for (XdsResource r : base) {
      if (r.type() == ResourceType.CLUSTER) {
        view.put(r.name(), r.version());
      }
    }
    configA = new ServedConfig(a, List.of());
    configB = new ServedConfig(oneEndpointChanged, List.of());
    changesAtoB = Map.of(ServedConfig.DEFAULT_GROUP, oneEndpointChanged.changedSince(a));
    changesBtoA = Map.of(ServedConfig.DEFAULT_GROUP, a.changedSince(oneEndpointChanged));
    // One Sharing per benchmark, as one per hub: the streams share what a fleet would.
    Sharing sharing = Sharing.interning();
    sotw = connectSotw(configA, sharing);
    delta = connectDelta(configA, sharing);
    atA = true;
  }

  static List<XdsResource> resources(Fleet fleet) {
    List<XdsResource> list = new ArrayList<>();
    for (int i = 0; i < fleet.clusters(); i++) {
      list.add(XdsResource.of(ResourceType.CLUSTER, fleet.cluster(i)));
      list.add(XdsResource.of(ResourceType.ENDPOINT, fleet.endpoints(i)));
    }
    return list;
  }

  // --- snapshot diff (once per reload) ---

  @Benchmark
  public Map<ResourceType, Set<String>> diffOneEndpointChanged() {
    return oneEndpointChanged.changedSince(a);
  }

  @Benchmark
  public Map<ResourceType, Set<String>> diffAllClustersChanged() {
    return allClustersChanged.changedSince(a);
  }

  @Benchmark
  public Snapshot buildSnapshot() {
    return Snapshot.of(base);
  }

  // --- version hashing (once per new resource version) ---

  @Benchmark
  public XdsResource serializeAndHashOneCluster() {
    return XdsResource.of(ResourceType.CLUSTER, oneCluster);
  }

  @Benchmark
  public String viewVersionOfAllClusters() {
    return Versions.ofView(view);
  }

  // --- per-stream response assembly (once per client per push) ---

  /** One endpoint set changes (alternating A→B→A), one SotW ADS stream assembles and gets an ACK. */
  @Benchmark
  public Object sotwStreamOneEndpointPush() {
    List<Outcome> out = atA ? sotw.onConfig(configB, changesAtoB) : sotw.onConfig(configA, changesBtoA);
    atA = !atA;
    ackSotw(sotw, out, atA ? configA : configB);
    return out;
  }

  @Benchmark
  public Object deltaStreamOneEndpointPush() {
    List<Outcome> out = atA ? delta.onConfig(configB, changesAtoB) : delta.onConfig(configA, changesBtoA);
    atA = !atA;
    ackDelta(delta, out, atA ? configA : configB);
    return out;
  }

  static SotwStream connectSotw(ServedConfig config, Sharing sharing) {
    SotwStream s = SotwStream.ads(Clock.systemUTC(), sharing);
    Node node = Node.newBuilder().setId("jmh").build();
    List<Outcome> out = s.onRequest(DiscoveryRequest.newBuilder().setNode(node).setTypeUrl(CDS).build(), config);
    ackSotw(s, out, config);
    List<String> names = new ArrayList<>(config.defaults().get(ResourceType.ENDPOINT).resources().keySet());
    out = s.onRequest(DiscoveryRequest.newBuilder().setTypeUrl(EDS).addAllResourceNames(names).build(), config);
    ackSotw(s, out, config);
    return s;
  }

  static void ackSotw(SotwStream s, List<Outcome> out, ServedConfig config) {
    for (int round = 0; round < 4 && !out.isEmpty(); round++) {
      List<Outcome> next = new ArrayList<>();
      for (Outcome o : out) {
        if (o instanceof Outcome.Send send && send.response() instanceof DiscoveryResponse r) {
          DiscoveryRequest.Builder ack = DiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl())
              .setVersionInfo(r.getVersionInfo()).setResponseNonce(r.getNonce());
          if (r.getTypeUrl().equals(EDS)) {
            ack.addAllResourceNames(edsNames(config));
          }
          next.addAll(s.onRequest(ack.build(), config));
        }
      }
      out = next;
    }
  }

  private static List<String> edsNames;

  /** The EDS subscription (every cluster), built once: a SotW ACK repeats it. */
  static List<String> edsNames(ServedConfig config) {
    if (edsNames == null) {
      edsNames = List.copyOf(config.defaults().get(ResourceType.ENDPOINT).resources().keySet());
    }
    return edsNames;
  }

  static DeltaStream connectDelta(ServedConfig config, Sharing sharing) {
    DeltaStream s = DeltaStream.ads(Clock.systemUTC(), sharing);
    Node node = Node.newBuilder().setId("jmh").build();
    List<Outcome> out = s.onRequest(DeltaDiscoveryRequest.newBuilder().setNode(node).setTypeUrl(CDS).build(), config);
    ackDelta(s, out, config);
    List<String> names = new ArrayList<>(config.defaults().get(ResourceType.ENDPOINT).resources().keySet());
    out = s.onRequest(DeltaDiscoveryRequest.newBuilder().setTypeUrl(EDS)
        .addAllResourceNamesSubscribe(names).build(), config);
    ackDelta(s, out, config);
    return s;
  }

  static void ackDelta(DeltaStream s, List<Outcome> out, ServedConfig config) {
    for (int round = 0; round < 4 && !out.isEmpty(); round++) {
      List<Outcome> next = new ArrayList<>();
      for (Outcome o : out) {
        if (o instanceof Outcome.Send send && send.response() instanceof DeltaDiscoveryResponse r) {
          next.addAll(s.onRequest(DeltaDiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl())
              .setResponseNonce(r.getNonce()).build(), config));
        }
      }
      out = next;
    }
  }
}
