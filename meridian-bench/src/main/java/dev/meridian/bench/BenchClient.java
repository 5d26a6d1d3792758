package dev.meridian.bench;

import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * One simulated Envoy: one ADS stream (SotW or Delta) on its own HTTP/2 connection, wildcard CDS,
 * then EDS for every cluster, ACKing every response. It records, per event, which clusters and
 * endpoint sets it received, the bytes and responses, and when it reached the event's goal.
 * Callbacks run on the channel's event loop; {@link #arm} comes from the driver: both synchronize.
 */
final class BenchClient {
  static final String CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
  static final String EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

  /** What an event waits for. */
  enum Goal {
    CONNECT, ALL_CLUSTERS, ONE_ENDPOINT,
    /**
     * SotW only: every endpoint set at the armed port (every set changed together, {@link
     * Fleet#changeAllEndpoints}); an EDS response whose first set has another port is stale and
     * not counted. A fresh client reaches it only after its CDS, so it means converged.
     */
    ALL_ENDPOINTS
  }

  /** Shared by all clients: the EDS subscription names (built once; large at 10,000 clusters). */
  static final class Shared {
    final int clusters;
    final List<String> names;
    final DiscoveryRequest sotwEds;
    final DeltaDiscoveryRequest deltaEds;
    /** The ADS methods: requests with pre-encoded EDS names; responses read as {@link LightResponse}. */
    final io.grpc.MethodDescriptor<DiscoveryRequest, LightResponse> sotwMethod;
    final io.grpc.MethodDescriptor<DeltaDiscoveryRequest, LightResponse> deltaMethod;

    Shared(int clusters) {
      this.clusters = clusters;
      List<String> n = new ArrayList<>(clusters);
      for (int i = 0; i < clusters; i++) {
        n.add(Fleet.name(i));
      }
      this.names = List.copyOf(n);
      this.sotwEds = DiscoveryRequest.newBuilder().setTypeUrl(EDS).addAllResourceNames(names).build();
      this.deltaEds = DeltaDiscoveryRequest.newBuilder().setTypeUrl(EDS)
          .addAllResourceNamesSubscribe(names).build();
      var ads = AggregatedDiscoveryServiceGrpc.getStreamAggregatedResourcesMethod();
      this.sotwMethod = ads.toBuilder(new PreEncodedNames(ads.getRequestMarshaller(), sotwEds),
          LightResponse.SOTW).build();
      var deltaAds = AggregatedDiscoveryServiceGrpc.getDeltaAggregatedResourcesMethod();
      this.deltaMethod = deltaAds.toBuilder(
          new PreEncodedRequest<>(deltaAds.getRequestMarshaller(), deltaEds), LightResponse.DELTA)
          .build();
    }
  }

  /**
   * A SotW client repeats all its EDS names in every EDS request (170 KB at 10,000 clusters). Each
   * real Envoy encodes that on its own CPU; 1,000 simulated ones share the server's two cores, so
   * the load generator encodes the names once and sends each request as its other fields + those
   * bytes (field order is free on the wire; the server parses exactly the same message).
   */
  static final class PreEncodedNames implements io.grpc.MethodDescriptor.Marshaller<DiscoveryRequest> {
    private final io.grpc.MethodDescriptor.Marshaller<DiscoveryRequest> plain;
    private final List<String> names;
    private final byte[] encoded;

    PreEncodedNames(io.grpc.MethodDescriptor.Marshaller<DiscoveryRequest> plain, DiscoveryRequest withNames) {
      this.plain = plain;
      this.names = withNames.getResourceNamesList();
      this.encoded = DiscoveryRequest.newBuilder().addAllResourceNames(names).build().toByteArray();
    }

    @Override
    public java.io.InputStream stream(DiscoveryRequest r) {
      if (r.getResourceNamesList() != names) { // not built from the shared request
        return plain.stream(r);
      }
      byte[] head = r.toBuilder().clearResourceNames().build().toByteArray();
      byte[] all = java.util.Arrays.copyOf(head, head.length + encoded.length);
      System.arraycopy(encoded, 0, all, head.length, encoded.length);
      return new KnownLengthBytes(all);
    }

    @Override
    public DiscoveryRequest parse(java.io.InputStream stream) {
      return plain.parse(stream);
    }
  }

  /**
   * A Delta client sends the same 10,000-name EDS subscription after every CDS update: the load
   * generator encodes that one shared request once and sends its bytes (as {@link
   * PreEncodedNames} does for SotW); every other request is encoded as usual.
   */
  static final class PreEncodedRequest<T> implements io.grpc.MethodDescriptor.Marshaller<T> {
    private final io.grpc.MethodDescriptor.Marshaller<T> plain;
    private final T shared;
    private final byte[] encoded;

    PreEncodedRequest(io.grpc.MethodDescriptor.Marshaller<T> plain, T shared) {
      this.plain = plain;
      this.shared = shared;
      this.encoded = ((com.google.protobuf.MessageLite) shared).toByteArray();
    }

    @Override
    public java.io.InputStream stream(T r) {
      return r == shared ? new KnownLengthBytes(encoded) : plain.stream(r);
    }

    @Override
    public T parse(java.io.InputStream stream) {
      return plain.parse(stream);
    }
  }

  /** Lets gRPC size the message up front. */
  static final class KnownLengthBytes extends java.io.ByteArrayInputStream implements io.grpc.KnownLength {
    KnownLengthBytes(byte[] bytes) {
      super(bytes);
    }
  }

  private final int id;
  private final boolean delta;
  private final Shared shared;
  private final ManagedChannel channel;
  /** Started before its server: the stream waits for a connection, retried by {@link #retryNow}. */
  private final boolean waitForReady;
  private StreamObserver<DiscoveryRequest> sotw;
  private StreamObserver<DeltaDiscoveryRequest> deltaOut;
  private boolean edsSubscribed;
  private String edsVersion = "";
  private boolean warming;
  private String edsNonce = "";
  private volatile Throwable error;

  // --- per event, guarded by this ---
  private Goal goal = Goal.CONNECT;
  private int expectGen; // ALL_CLUSTERS: the connect timeout; ONE_ENDPOINT: the port
  private int endpointIndex;
  private long startNanos;
  private final BitSet cds;
  private final BitSet eds;
  private long bytes;
  private long responses;
  private long doneNanos = -1;
  private long firstNanos = -1;
  private int mismatches;

  BenchClient(int id, boolean delta, Shared shared, ManagedChannel channel) {
    this(id, delta, shared, channel, false);
  }

  BenchClient(int id, boolean delta, Shared shared, ManagedChannel channel, boolean waitForReady) {
    this.id = id;
    this.delta = delta;
    this.shared = shared;
    this.channel = channel;
    this.waitForReady = waitForReady;
    this.cds = new BitSet(shared.clusters);
    this.eds = new BitSet(shared.clusters);
  }

  /** Resets the event counters; call before triggering the event. */
  synchronized void arm(Goal goal, int expectGen, int endpointIndex, long startNanos) {
    this.goal = goal;
    this.expectGen = expectGen;
    this.endpointIndex = endpointIndex;
    this.startNanos = startNanos;
    cds.clear();
    eds.clear();
    bytes = 0;
    responses = 0;
    doneNanos = -1;
    firstNanos = -1;
    mismatches = 0;
  }

  void start() {
    io.grpc.CallOptions options = waitForReady ? io.grpc.CallOptions.DEFAULT.withWaitForReady()
        : io.grpc.CallOptions.DEFAULT;
    Node node = Node.newBuilder().setId("bench-" + id).setCluster("bench").build();
    if (delta) {
      deltaOut = io.grpc.stub.ClientCalls.asyncBidiStreamingCall(
          channel.newCall(shared.deltaMethod, options), new StreamObserver<>() {
        @Override
        public void onNext(LightResponse r) {
          onDelta(r);
        }

        @Override
        public void onError(Throwable t) {
          error = t;
        }

        @Override
        public void onCompleted() {}
      });
      deltaOut.onNext(DeltaDiscoveryRequest.newBuilder().setNode(node).setTypeUrl(CDS).build());
    } else {
      sotw = io.grpc.stub.ClientCalls.asyncBidiStreamingCall(
          channel.newCall(shared.sotwMethod, options), new StreamObserver<>() {
        @Override
        public void onNext(LightResponse r) {
          onSotw(r);
        }

        @Override
        public void onError(Throwable t) {
          error = t;
        }

        @Override
        public void onCompleted() {}
      });
      sotw.onNext(DiscoveryRequest.newBuilder().setNode(node).setTypeUrl(CDS).build());
    }
  }

  private synchronized void onSotw(LightResponse r) {
    received();
    bytes += r.size;
    responses++;
    boolean isCds = r.typeUrl.equals(CDS);
    if (isCds || goal != Goal.ALL_ENDPOINTS || r.count == 0 || portOf(r, 0) == expectGen) {
      for (int k = 0; k < r.count; k++) {
        record(isCds, r, k);
      }
    }
    check(); // the client has what it received now: its own ACK (170 KB at 10,000 names) comes after
    if (isCds) {
      sotw.onNext(DiscoveryRequest.newBuilder().setTypeUrl(CDS).setVersionInfo(r.version)
          .setResponseNonce(r.nonce).build());
      if (!edsSubscribed) {
        edsSubscribed = true;
        sotw.onNext(shared.sotwEds);
      } else if (r.count > 0) {
        // Like Envoy: updated clusters warm and (re)subscribe their endpoints, which repeats the
        // EDS request with the last accepted version and nonce.
        warming = true;
        sotw.onNext(shared.sotwEds.toBuilder().setVersionInfo(edsVersion)
            .setResponseNonce(edsNonce).build());
      }
    } else {
      warming = false;
      // A SotW ACK repeats the whole subscription.
      edsVersion = r.version;
      edsNonce = r.nonce;
      sotw.onNext(shared.sotwEds.toBuilder().setVersionInfo(edsVersion)
          .setResponseNonce(edsNonce).build());
    }
  }

  private synchronized void onDelta(LightResponse r) {
    received();
    bytes += r.size;
    responses++;
    boolean isCds = r.typeUrl.equals(CDS);
    for (int k = 0; k < r.count; k++) {
      record(isCds, r, k);
    }
    check();
    deltaOut.onNext(DeltaDiscoveryRequest.newBuilder().setTypeUrl(r.typeUrl)
        .setResponseNonce(r.nonce).build());
    if (isCds && !edsSubscribed) {
      edsSubscribed = true;
      deltaOut.onNext(shared.deltaEds);
    } else if (isCds && r.count > 0) {
      // As in SotW: the updated (warming) clusters ask for their endpoints again.
      deltaOut.onNext(shared.deltaEds);
    }
  }

  /** The port of the k-th endpoint set of an EDS response (its first endpoint); -1 if unreadable. */
  private static int portOf(LightResponse r, int k) {
    try {
      return ClusterLoadAssignment.parseFrom(r.body(k)).getEndpoints(0).getLbEndpoints(0)
          .getEndpoint().getAddress().getSocketAddress().getPortValue();
    } catch (InvalidProtocolBufferException | IndexOutOfBoundsException e) {
      return -1;
    }
  }

  private void received() {
    if (firstNanos < 0) {
      firstNanos = System.nanoTime();
    }
  }

  /** Marks a received resource; checks the content where the event's goal depends on it. */
  private void record(boolean isCds, LightResponse r, int k) {
    int index = r.index(k);
    if (index < 0 || index >= shared.clusters) {
      mismatches++;
      return;
    }
    try {
      if (isCds) {
        // Every cluster changes together: check the first of each response (cheap), count all.
        if (goal == Goal.ALL_CLUSTERS && cds.isEmpty()
            && Cluster.parseFrom(r.body(k)).getConnectTimeout().getSeconds() != expectGen) {
          mismatches++;
          return;
        }
        cds.set(index);
      } else {
        if (goal == Goal.ONE_ENDPOINT && index == endpointIndex) {
          ClusterLoadAssignment cla = ClusterLoadAssignment.parseFrom(r.body(k));
          if (cla.getEndpoints(0).getLbEndpoints(0).getEndpoint().getAddress().getSocketAddress()
              .getPortValue() != expectGen) {
            mismatches++;
            return;
          }
        }
        eds.set(index);
      }
    } catch (InvalidProtocolBufferException e) {
      mismatches++;
    }
  }

  private void check() {
    if (doneNanos >= 0) {
      return;
    }
    int n = shared.clusters;
    boolean done = switch (goal) {
      case CONNECT -> cds.cardinality() == n && eds.cardinality() == n;
      case ALL_CLUSTERS -> cds.cardinality() == n;
      case ONE_ENDPOINT -> eds.get(endpointIndex);
      case ALL_ENDPOINTS -> eds.cardinality() == n;
    };
    if (done) {
      doneNanos = System.nanoTime();
      notifyAll();
    }
  }

  /** Waits (at most {@code millis}) until the armed event's goal is reached; whether it is. */
  synchronized boolean awaitDone(long millis) throws InterruptedException {
    long deadline = System.nanoTime() + millis * 1_000_000;
    while (doneNanos < 0) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      wait(Math.max(1, left / 1_000_000));
    }
    return true;
  }

  /** Milliseconds from the event's start to its goal; NaN if not reached. */
  synchronized double latencyMillis() {
    return doneNanos < 0 ? Double.NaN : (doneNanos - startNanos) / 1e6;
  }

  /** Milliseconds from the event's start to the first response after it; NaN if none. */
  synchronized double firstResponseMillis() {
    return firstNanos < 0 ? Double.NaN : (firstNanos - startNanos) / 1e6;
  }

  /**
   * Reconnects at once if the last connection attempt failed: gRPC would back off for a second
   * and more, and the figure would measure its backoff, not the server.
   */
  void retryNow() {
    retryNow(channel);
  }

  static void retryNow(ManagedChannel channel) {
    if (channel.getState(false) == io.grpc.ConnectivityState.TRANSIENT_FAILURE) {
      channel.resetConnectBackoff();
    }
  }

  synchronized boolean done() {
    return doneNanos >= 0;
  }

  synchronized long bytes() {
    return bytes;
  }

  /**
   * SotW: whether the client re-requested its endpoints after a cluster update (Envoy's warming)
   * and has had no endpoint response since. An event is not over while any client is warming.
   */
  synchronized boolean warming() {
    return warming;
  }

  synchronized long responses() {
    return responses;
  }

  synchronized int mismatches() {
    return mismatches;
  }

  Throwable error() {
    return error;
  }

  void close() {
    try {
      if (sotw != null) {
        sotw.onCompleted();
      }
      if (deltaOut != null) {
        deltaOut.onCompleted();
      }
    } catch (RuntimeException e) {
      // the stream may already be gone
    }
    channel.shutdownNow();
  }

  void awaitClosed(long millis) throws InterruptedException {
    channel.awaitTermination(millis, java.util.concurrent.TimeUnit.MILLISECONDS);
  }
}
