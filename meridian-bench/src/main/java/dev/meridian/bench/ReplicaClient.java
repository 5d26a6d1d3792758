package dev.meridian.bench;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * One simulated client of replicated Meridians ({@link ReplicaBench}): one ADS stream (SotW or
 * Delta) to one replica, wildcard CDS then EDS for every cluster, every response ACKed, as {@link
 * BenchClient}. When its stream fails (its replica was killed) it moves to another replica on a new
 * connection and resumes carrying what it holds, as Envoy and grpc-java do: SotW, each type's
 * {@code version_info} and (EDS) resource names; Delta, {@code initial_resource_versions}. Every
 * resource received is counted, so a resume that is sent anything it holds shows as resent.
 * Callbacks run on the channel's event loop; the driver's calls synchronize with them.
 */
final class ReplicaClient {
  static final String CDS = BenchClient.CDS;
  static final String EDS = BenchClient.EDS;

  /** What an event waits for; NONE: only count what arrives. */
  enum Goal { NONE, CONNECT, ONE_ENDPOINT, FAILOVER }

  private final int id;
  private final boolean delta;
  private final BenchClient.Shared shared;
  private final List<Integer> ports;
  private final IntFunction<ManagedChannel> channels;
  private final ScheduledExecutorService scheduler;
  private final Node node;

  // --- the connection, guarded by this ---
  private int replica;
  private ManagedChannel channel;
  private StreamObserver<DiscoveryRequest> sotw;
  private StreamObserver<DeltaDiscoveryRequest> deltaOut;
  /** Stream generation: callbacks of an earlier stream are ignored. */
  private int generation;
  private long streamOpenedNanos;
  private boolean closed;
  private int moves;
  private volatile Throwable lastError;

  // --- what the client holds, guarded by this ---
  private final BitSet cds;
  private final BitSet eds;
  private boolean edsSubscribed;
  private String cdsVersion = "";
  private String edsVersion = "";
  private String edsNonce = "";
  /** Delta: the version of each held resource, by cluster index. */
  private final String[] cdsVersions;
  private final String[] edsVersions;

  // --- per event, guarded by this ---
  private Goal goal = Goal.NONE;
  private int expect;
  private int endpointIndex;
  private long startNanos;
  private long doneNanos = -1;
  private long responses;
  private long resources;
  private int mismatches;

  /**
   * @param ports every replica's xDS port; the client starts on {@code home}
   * @param channels a new channel (its own HTTP/2 connection) to a port
   */
  ReplicaClient(int id, boolean delta, BenchClient.Shared shared, List<Integer> ports, int home,
      IntFunction<ManagedChannel> channels, ScheduledExecutorService scheduler) {
    this.id = id;
    this.delta = delta;
    this.shared = shared;
    this.ports = ports;
    this.replica = home;
    this.channels = channels;
    this.scheduler = scheduler;
    this.node = Node.newBuilder().setId("bench-" + id).setCluster("bench").build();
    this.cds = new BitSet(shared.clusters);
    this.eds = new BitSet(shared.clusters);
    this.cdsVersions = delta ? new String[shared.clusters] : null;
    this.edsVersions = delta ? new String[shared.clusters] : null;
  }

  /** Resets the event's counters; call before triggering the event. */
  synchronized void arm(Goal goal, int expect, int endpointIndex, long startNanos) {
    this.goal = goal;
    this.expect = expect;
    this.endpointIndex = endpointIndex;
    this.startNanos = startNanos;
    this.doneNanos = -1;
    this.responses = 0;
    this.resources = 0;
    this.mismatches = 0;
    check();
  }

  synchronized void start() {
    open(replica);
  }

  /** Opens a stream to replica {@code r} on a new connection; resumes if it holds anything. */
  private void open(int r) {
    int gen = ++generation;
    replica = r;
    if (channel != null) {
      channel.shutdownNow();
    }
    channel = channels.apply(ports.get(r));
    streamOpenedNanos = System.nanoTime();
    boolean resume = cds.cardinality() > 0 || edsSubscribed;
    if (delta) {
      deltaOut = ClientCalls.asyncBidiStreamingCall(
          channel.newCall(shared.deltaMethod, CallOptions.DEFAULT), observer(gen));
      DeltaDiscoveryRequest.Builder c = DeltaDiscoveryRequest.newBuilder().setNode(node)
          .setTypeUrl(CDS);
      if (resume) {
        held(cds, cdsVersions, c);
      }
      deltaOut.onNext(c.build());
      if (edsSubscribed) {
        DeltaDiscoveryRequest.Builder e = shared.deltaEds.toBuilder();
        held(eds, edsVersions, e);
        deltaOut.onNext(e.build());
      }
    } else {
      sotw = ClientCalls.asyncBidiStreamingCall(
          channel.newCall(shared.sotwMethod, CallOptions.DEFAULT), observer(gen));
      sotw.onNext(DiscoveryRequest.newBuilder().setNode(node).setTypeUrl(CDS)
          .setVersionInfo(cdsVersion).build());
      if (edsSubscribed) {
        // A new stream: the last accepted version, no nonce, every name.
        sotw.onNext(shared.sotwEds.toBuilder().setVersionInfo(edsVersion).build());
      }
    }
  }

  private static void held(BitSet have, String[] versions, DeltaDiscoveryRequest.Builder b) {
    for (int i = have.nextSetBit(0); i >= 0; i = have.nextSetBit(i + 1)) {
      b.putInitialResourceVersions(Fleet.name(i), versions[i]);
    }
  }

  private <Q> ClientResponseObserver<Q, LightResponse> observer(int gen) {
    return new ClientResponseObserver<>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<Q> requests) {
        requests.setOnReadyHandler(() -> ready(gen));
      }

      @Override
      public void onNext(LightResponse r) {
        if (delta) {
          onDelta(gen, r);
        } else {
          onSotw(gen, r);
        }
      }

      @Override
      public void onError(Throwable t) {
        failed(gen, t);
      }

      @Override
      public void onCompleted() {
        failed(gen, new IllegalStateException("stream ended by the server"));
      }
    };
  }

  /** The stream is established on a live replica: a moved client is back. */
  private synchronized void ready(int gen) {
    if (gen != generation || doneNanos >= 0 || goal != Goal.FAILOVER
        || streamOpenedNanos < startNanos) {
      return;
    }
    doneNanos = System.nanoTime();
  }

  private synchronized void failed(int gen, Throwable t) {
    if (gen != generation || closed) {
      return;
    }
    lastError = t;
    generation++; // no more callbacks of this stream count
    int n = ports.size();
    // The first move spreads the clients of a lost replica over the others; later ones go round.
    int next = moves == 0 && n > 1 ? (replica + 1 + id % (n - 1)) % n : (replica + 1) % n;
    long delayMs = moves == 0 ? 0 : 50;
    moves++;
    scheduler.schedule(() -> {
      synchronized (this) {
        if (!closed) {
          open(next);
        }
      }
    }, delayMs, TimeUnit.MILLISECONDS);
  }

  private synchronized void onSotw(int gen, LightResponse r) {
    if (gen != generation) {
      return;
    }
    boolean isCds = r.typeUrl.equals(CDS);
    count(r, isCds);
    if (isCds) {
      cdsVersion = r.version;
      sotw.onNext(DiscoveryRequest.newBuilder().setTypeUrl(CDS).setVersionInfo(r.version)
          .setResponseNonce(r.nonce).build());
      if (!edsSubscribed) {
        edsSubscribed = true;
        sotw.onNext(shared.sotwEds);
      } else if (r.count > 0) {
        sotw.onNext(shared.sotwEds.toBuilder().setVersionInfo(edsVersion)
            .setResponseNonce(edsNonce).build());
      }
    } else {
      edsVersion = r.version;
      edsNonce = r.nonce;
      sotw.onNext(shared.sotwEds.toBuilder().setVersionInfo(edsVersion)
          .setResponseNonce(edsNonce).build());
    }
  }

  private synchronized void onDelta(int gen, LightResponse r) {
    if (gen != generation) {
      return;
    }
    boolean isCds = r.typeUrl.equals(CDS);
    count(r, isCds);
    for (int k = 0; k < r.count; k++) {
      int i = r.index(k);
      if (i >= 0 && i < shared.clusters) {
        try {
          (isCds ? cdsVersions : edsVersions)[i] = r.version(k);
        } catch (java.io.IOException e) {
          mismatches++;
        }
      }
    }
    deltaOut.onNext(DeltaDiscoveryRequest.newBuilder().setTypeUrl(r.typeUrl)
        .setResponseNonce(r.nonce).build());
    if (isCds && !edsSubscribed) {
      edsSubscribed = true;
      deltaOut.onNext(shared.deltaEds);
    }
  }

  /** Records a response's resources and checks the event's goal. */
  private void count(LightResponse r, boolean isCds) {
    responses++;
    resources += r.count;
    for (int k = 0; k < r.count; k++) {
      int i = r.index(k);
      if (i < 0 || i >= shared.clusters) {
        mismatches++;
        continue;
      }
      (isCds ? cds : eds).set(i);
      if (!isCds && goal == Goal.ONE_ENDPOINT && i == endpointIndex && doneNanos < 0) {
        try {
          int port = ClusterLoadAssignment.parseFrom(r.body(k)).getEndpoints(0).getLbEndpoints(0)
              .getEndpoint().getAddress().getSocketAddress().getPortValue();
          if (port == expect) {
            doneNanos = System.nanoTime();
          } else {
            mismatches++;
          }
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
          mismatches++;
        }
      }
    }
    check();
  }

  private void check() {
    if (doneNanos < 0 && goal == Goal.CONNECT && cds.cardinality() == shared.clusters
        && eds.cardinality() == shared.clusters) {
      doneNanos = System.nanoTime();
    }
  }

  /** Milliseconds from the event's start to its goal; NaN if not reached. */
  synchronized double latencyMillis() {
    return doneNanos < 0 ? Double.NaN : (doneNanos - startNanos) / 1e6;
  }

  synchronized boolean done() {
    return doneNanos >= 0;
  }

  synchronized Goal goal() {
    return goal;
  }

  synchronized int replica() {
    return replica;
  }

  /** Responses received since the event was armed. */
  synchronized long responses() {
    return responses;
  }

  /** Resources received since the event was armed. */
  synchronized long resources() {
    return resources;
  }

  synchronized int mismatches() {
    return mismatches;
  }

  synchronized int moves() {
    return moves;
  }

  Throwable lastError() {
    return lastError;
  }

  String nodeId() {
    return node.getId();
  }

  synchronized void close() {
    closed = true;
    generation++;
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
    if (channel != null) {
      channel.shutdownNow();
    }
  }

  void awaitClosed(long millis) throws InterruptedException {
    ManagedChannel c;
    synchronized (this) {
      c = channel;
    }
    if (c != null) {
      c.awaitTermination(millis, TimeUnit.MILLISECONDS);
    }
  }
}
