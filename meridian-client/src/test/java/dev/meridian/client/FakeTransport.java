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

/** A scripted peer: the test reads what the client sent and answers for the server. */
final class FakeTransport implements XdsTransport {
  static final class FakeCall<Q, R> implements Call<Q> {
    final StreamScope scope;
    final Listener<R> listener;
    final Deque<Q> requests = new ArrayDeque<>();
    boolean cancelled;

    FakeCall(StreamScope scope, Listener<R> listener) {
      this.scope = scope;
      this.listener = listener;
    }

    @Override
    public void send(Q request) {
      requests.add(request);
    }

    @Override
    public void cancel(String reason) {
      cancelled = true;
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

    void respond(R response) {
      listener.onMessage(response);
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

  @Override
  public void close() {
    closed = true;
  }
}
