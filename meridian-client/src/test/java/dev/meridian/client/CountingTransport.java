package dev.meridian.client;

import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real transport that counts what one server sends: the resources in its responses (so a test
 * can say "sent nothing the client held") and the streams open to it.
 */
final class CountingTransport implements XdsTransport {
  private final XdsTransport delegate;
  final AtomicInteger resources = new AtomicInteger();
  final AtomicInteger responses = new AtomicInteger();
  final AtomicInteger open = new AtomicInteger();

  CountingTransport(XdsTransport delegate) {
    this.delegate = delegate;
  }

  @Override
  public Call<DiscoveryRequest> openSotw(StreamScope scope, Listener<DiscoveryResponse> l) {
    return counted(l, r -> r.getResourcesCount(),
        wrapped -> delegate.openSotw(scope, wrapped));
  }

  @Override
  public Call<DeltaDiscoveryRequest> openDelta(StreamScope scope,
      Listener<DeltaDiscoveryResponse> l) {
    return counted(l, r -> r.getResourcesCount(),
        wrapped -> delegate.openDelta(scope, wrapped));
  }

  private <Q, R> Call<Q> counted(Listener<R> l, java.util.function.ToIntFunction<R> count,
      java.util.function.Function<Listener<R>, Call<Q>> open) {
    AtomicBoolean ended = new AtomicBoolean();
    this.open.incrementAndGet();
    Call<Q> call = open.apply(new Listener<>() {
      @Override
      public void onReady() {
        l.onReady();
      }

      @Override
      public void onMessage(R response) {
        responses.incrementAndGet();
        resources.addAndGet(count.applyAsInt(response));
        l.onMessage(response);
      }

      @Override
      public void onClosed(Status status) {
        if (ended.compareAndSet(false, true)) {
          CountingTransport.this.open.decrementAndGet();
        }
        l.onClosed(status);
      }
    });
    return new Call<>() {
      @Override
      public void send(Q request) {
        call.send(request);
      }

      @Override
      public void request(int n) {
        call.request(n);
      }

      @Override
      public void cancel(String reason) {
        if (ended.compareAndSet(false, true)) {
          CountingTransport.this.open.decrementAndGet();
        }
        call.cancel(reason);
      }
    };
  }

  void reset() {
    resources.set(0);
    responses.set(0);
  }

  @Override
  public void close() {
    delegate.close();
  }
}
