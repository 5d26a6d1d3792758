package dev.meridian.client;

import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * A scripted peer: the test reads what the client sent and answers for the server. Like a gRPC
 * call under manual flow control, a response waits in the call until the client asks for one.
 */
final class FakeTransport implements XdsTransport {
  static final class FakeCall<Q, R> implements Call<Q> {
    final StreamScope scope;
    final Listener<R> listener;
    final Deque<Q> requests = new ArrayDeque<>();
    volatile boolean cancelled;
    private final Deque<R> waiting = new ArrayDeque<>();
    private int wanted;
    private boolean delivering;

    FakeCall(StreamScope scope, Listener<R> listener) {
      this.scope = scope;
      this.listener = listener;
    }

    @Override
    public void send(Q request) {
      requests.add(request);
    }

    @Override
    public void request(int count) {
      synchronized (this) {
        wanted += count;
      }
      deliver();
    }

    @Override
    public void cancel(String reason) {
      cancelled = true;
    }

    /** Responses sent by the test that the client has not asked for yet. */
    synchronized int waiting() {
      return waiting.size();
    }

    /** Responses the client asked for that the test has not sent yet. */
    synchronized int wanted() {
      return wanted;
    }

    private void deliver() {
      while (true) {
        R next;
        synchronized (this) {
          if (delivering || wanted == 0 || waiting.isEmpty()) {
            return;
          }
          wanted--;
          next = waiting.poll();
          delivering = true; // one at a time, in order, even when the client asks re-entrantly
        }
        try {
          listener.onMessage(next);
        } finally {
          synchronized (this) {
            delivering = false;
          }
        }
      }
    }

    /** The next request the client sent; fails if there is none. */
    Q next() {
      Q q = requests.poll();
      if (q == null) {
        throw new AssertionError("the client sent no request");
      }
      return q;
    }

    void ready() {
      listener.onReady();
    }

    /** Sends a response; the client gets it now if it asked for one, else when it does. */
    void respond(R response) {
      synchronized (this) {
        waiting.add(response);
      }
      deliver();
    }

    void fail(Status status) {
      listener.onClosed(status);
    }
  }

  final List<FakeCall<DiscoveryRequest, DiscoveryResponse>> sotwCalls = new ArrayList<>();
  final List<FakeCall<DeltaDiscoveryRequest, DeltaDiscoveryResponse>> deltaCalls = new ArrayList<>();
  boolean closed;

  @Override
  public Call<DiscoveryRequest> openSotw(StreamScope scope, Listener<DiscoveryResponse> l) {
    FakeCall<DiscoveryRequest, DiscoveryResponse> c = new FakeCall<>(scope, l);
    sotwCalls.add(c);
    return c;
  }

  @Override
  public Call<DeltaDiscoveryRequest> openDelta(StreamScope scope,
      Listener<DeltaDiscoveryResponse> l) {
    FakeCall<DeltaDiscoveryRequest, DeltaDiscoveryResponse> c = new FakeCall<>(scope, l);
    deltaCalls.add(c);
    return c;
  }

  FakeCall<DiscoveryRequest, DiscoveryResponse> lastSotw() {
    return sotwCalls.get(sotwCalls.size() - 1);
  }

  FakeCall<DeltaDiscoveryRequest, DeltaDiscoveryResponse> lastDelta() {
    return deltaCalls.get(deltaCalls.size() - 1);
  }

  private final List<Runnable> whenConnected = new ArrayList<>();

  @Override
  public void whenConnected(Runnable task) {
    whenConnected.add(task);
  }

  /** The connection to the server became ready (a channel's READY). */
  void connected() {
    whenConnected.forEach(Runnable::run);
  }

  @Override
  public void close() {
    closed = true;
  }
}
