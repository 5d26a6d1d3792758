package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.Any;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.internal.protocol.HeartbeatPolicy;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.internal.protocol.Snapshot;
import dev.meridian.internal.protocol.XdsResource;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * Issue 25: the REST-JSON endpoint (spec "REST-JSON polling subscriptions") on arbitrary request
 * bodies, in process: the handler answers every body with one HTTP status (200 with a
 * DiscoveryResponse of the path's type, or a 4xx saying why), never an exception.
 */
class RestDiscoveryFuzzTest {
  static final Set<Integer> STATUSES = Set.of(200, 304, 400, 403);
  static final DiscoveryHub HUB = new DiscoveryHub();

  static {
    HUB.update(new ServedConfig(Snapshot.of(List.of(
        XdsResource.of(ResourceType.CLUSTER, Cluster.newBuilder().setName("backend").build()),
        XdsResource.of(ResourceType.LISTENER, Listener.newBuilder().setName("http").build()))),
        List.of()));
  }

  /** No held polls (no Prefer: wait), so neither the pool nor the timers are ever used. */
  static final RestDiscovery REST = new RestDiscovery(HUB, Clock.systemUTC(),
      HeartbeatPolicy.DEFAULT, Runnable::run, null, Duration.ZERO, false, Bounds.DEFAULT,
      new HttpExecutor("rest-fuzz", Bounds.DEFAULT, null),
      new RequestMemory(Bounds.DEFAULT.requestMemoryLimit()));

  @FuzzTest
  void anyBodyGetsOneStatusAndNeverAnException(byte[] body) throws Exception {
    for (String path : List.of("clusters", "listeners")) {
      ResourceType type = path.equals("clusters") ? ResourceType.CLUSTER : ResourceType.LISTENER;
      Exchange ex = new Exchange(RestDiscovery.PREFIX + path, body);
      REST.handle(ex);
      assertThat(ex.status).as("status").isIn(STATUSES);
      assertThat(ex.closed).as("exchange closed").isTrue();
      if (ex.status == 200) {
        DiscoveryResponse.Builder r = DiscoveryResponse.newBuilder();
        EnvoyTypeRegistry.get().parser().merge(ex.body.toString(StandardCharsets.UTF_8), r);
        assertThat(r.getTypeUrl()).isEqualTo(type.typeUrl());
        for (Any a : r.getResourcesList()) {
          assertThat(a.getTypeUrl()).isEqualTo(type.typeUrl());
        }
      }
    }
  }

  /** Just enough of an HttpExchange for one POST: records the status and body. */
  static final class Exchange extends HttpExchange {
    final URI uri;
    final InputStream in;
    final Headers requestHeaders = new Headers();
    final Headers responseHeaders = new Headers();
    final ByteArrayOutputStream body = new ByteArrayOutputStream();
    int status = -1;
    boolean closed;

    Exchange(String path, byte[] request) {
      this.uri = URI.create(path);
      this.in = new ByteArrayInputStream(request);
    }

    @Override public Headers getRequestHeaders() { return requestHeaders; }
    @Override public Headers getResponseHeaders() { return responseHeaders; }
    @Override public URI getRequestURI() { return uri; }
    @Override public String getRequestMethod() { return "POST"; }
    @Override public HttpContext getHttpContext() { return null; }
    @Override public void close() { closed = true; }
    @Override public InputStream getRequestBody() { return in; }
    @Override public OutputStream getResponseBody() { return body; }

    @Override
    public void sendResponseHeaders(int code, long length) {
      assertThat(status).as("a second status").isEqualTo(-1);
      status = code;
    }

    @Override public InetSocketAddress getRemoteAddress() {
      return new InetSocketAddress("127.0.0.1", 40000);
    }
    @Override public int getResponseCode() { return status; }
    @Override public InetSocketAddress getLocalAddress() {
      return new InetSocketAddress("127.0.0.1", 18001);
    }
    @Override public String getProtocol() { return "HTTP/1.1"; }
    @Override public Object getAttribute(String name) { return null; }
    @Override public void setAttribute(String name, Object value) {}
    @Override public void setStreams(InputStream i, OutputStream o) {}
    @Override public HttpPrincipal getPrincipal() { return null; }
  }
}
