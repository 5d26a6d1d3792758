package dev.meridian.internal.server;

import dev.meridian.internal.protocol.NodeMatcher;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.Snapshot;
import dev.meridian.internal.protocol.SotwStream;
import dev.meridian.internal.protocol.XdsResource;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A hub's fan-out (DESIGN "Fan-out", issue 19): 10,000 SotW ADS streams, spread over {@code groups}
 * node groups, each subscribed by name to its group's endpoint sets. A config change of one group
 * vs of every group, through the real {@link DiscoveryHub} and {@link StreamHandler}s, each stream
 * assembling its response and taking the client's ACK. Streams run on direct executors, so
 * {@code update} returns when every stream concerned is done: its time is the whole work.
 *
 * <p>In this package because streams attach to a hub through package-private classes (no public
 * hook for a benchmark). Run with {@code java -jar meridian-bench/target/meridian-bench.jar
 * HubFanOutBenchmark}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g"})
@State(Scope.Thread)
public class HubFanOutBenchmark {
  static final ResourceType EDS = ResourceType.ENDPOINT;
  /** Endpoint sets per group; every stream subscribes to all of its group's. */
  static final int NAMES = 10;

  @Param({"10000"})
  int streams;

  /** 100: the change of one group concerns 100 streams; 1: a fleet, every change concerns all. */
  @Param({"100", "1"})
  int groups;

  /** Kept: a logger's level holds only while the logger is referenced. */
  Logger quiet;
  DiscoveryHub hub;
  ServedConfig base;
  ServedConfig oneGroupChanged;
  ServedConfig allGroupsChanged;
  boolean atBase = true;

  @Setup
  public void setUp() {
    quiet = Logger.getLogger("dev.meridian.server.xds");
    quiet.setLevel(Level.WARNING); // no line per stream opened
    hub = new DiscoveryHub();
    base = config(-1, 0);
    oneGroupChanged = config(groups / 2, 1);
    allGroupsChanged = config(-1, 1);
    hub.update(base);
    List<String> names = new ArrayList<>();
    for (int n = 0; n < NAMES; n++) {
      names.add("e" + n);
    }
    Clock clock = Clock.systemUTC();
    for (int i = 0; i < streams; i++) {
      Client c = new Client(names);
      StreamHandler<DiscoveryRequest, DiscoveryResponse> h = new StreamHandler<>(hub,
          SotwStream.ads(clock, hub.sharing()), c, new SerialExecutor(Runnable::run), "bench",
          clock);
      c.handler = h;
      h.onNext(DiscoveryRequest.newBuilder()
          .setNode(Node.newBuilder().setId("g" + (i % groups) + "-" + i))
          .setTypeUrl(EDS.typeUrl()).addAllResourceNames(names).build());
      if (c.responses != 1) {
        throw new IllegalStateException("stream " + i + " got " + c.responses + " responses");
      }
    }
  }

  /** Group {@code changed} (-1: every group) has its endpoint set e0 on port 1000 + {@code shift}. */
  ServedConfig config(int changed, int shift) {
    List<ServedConfig.Group> list = new ArrayList<>();
    for (int g = 0; g < groups; g++) {
      List<XdsResource> rs = new ArrayList<>();
      for (int n = 0; n < NAMES; n++) {
        boolean moved = n == 0 && (changed == -1 || changed == g);
        rs.add(endpoints("e" + n, 1000 + n + (moved ? shift : 0)));
      }
      list.add(new ServedConfig.Group("g" + g, new NodeMatcher("g" + g + "-*", null),
          Snapshot.of(rs)));
    }
    return new ServedConfig(Snapshot.empty(), list);
  }

  static XdsResource endpoints(String name, int port) {
    return XdsResource.of(EDS, ClusterLoadAssignment.newBuilder().setClusterName(name)
        .addEndpoints(LocalityLbEndpoints.newBuilder().addLbEndpoints(LbEndpoint.newBuilder()
            .setEndpoint(Endpoint.newBuilder().setAddress(Address.newBuilder().setSocketAddress(
                SocketAddress.newBuilder().setAddress("127.0.0.1").setPortValue(port)))))).build());
  }

  /** One endpoint set of one group changes (and back, on the next call). */
  @Benchmark
  public int oneGroupChange() {
    atBase = !atBase;
    return hub.update(atBase ? base : oneGroupChanged);
  }

  /** The endpoint set e0 of every group changes (and back, on the next call). */
  @Benchmark
  public int allGroupsChange() {
    atBase = !atBase;
    return hub.update(atBase ? base : allGroupsChanged);
  }

  /** The client end of a stream: ACKs each response at once, as a healthy fleet does. */
  static final class Client extends ServerCallStreamObserver<DiscoveryResponse> {
    final List<String> names;
    StreamHandler<DiscoveryRequest, DiscoveryResponse> handler;
    int responses;

    Client(List<String> names) {
      this.names = names;
    }

    @Override
    public void onNext(DiscoveryResponse r) {
      responses++;
      handler.onNext(DiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl())
          .setVersionInfo(r.getVersionInfo()).setResponseNonce(r.getNonce())
          .addAllResourceNames(names).build());
    }

    @Override
    public void onError(Throwable t) {
      throw new IllegalStateException("stream closed", t);
    }

    @Override
    public void onCompleted() {}

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public void setOnReadyHandler(Runnable r) {}

    @Override
    public void setOnCancelHandler(Runnable r) {}

    @Override
    public void setCompression(String c) {}

    @Override
    public void setOnCloseHandler(Runnable r) {}

    @Override
    public void disableAutoInboundFlowControl() {}

    @Override
    public void request(int n) {}

    @Override
    public void setMessageCompression(boolean enable) {}
  }
}
