package dev.meridian.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.stub.ClientCalls;
import io.grpc.xds.XdsServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A proxyless gRPC server ({@code XdsServerBuilder}) gets its inbound listener from Meridian. */
@Timeout(90) // every wait inside is bounded; this only guards against a hung client library
class XdsServerTest {
  @TempDir Path dir;

  @Test
  void xdsServerBuilderServesWithTheInboundListenerFromMeridian() throws Exception {
    int port;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      // The listener's name and address must name the port before the server exists; the tiny
      // window in which another process could take the probed port is accepted in this test.
      port = probe.getLocalPort();
    }
    // gRFC A36: the server subscribes to the listener named by the bootstrap's
    // server_listener_resource_name_template with %s = its listening address, which grpc-java
    // 1.85.1 spells 0.0.0.0:<port> even when bound to 127.0.0.1 (observed).
    String listener = "grpc/server?xds.resource.listening_address=0.0.0.0:" + port;
    Config config = new Config().add(Config.serverListener(listener, "0.0.0.0", port));
    // ...and a client reaching it through Meridian as well, to close the loop.
    config.add(Config.clientListener("greeter", "greeter-routes"))
        .add(Config.routes("greeter-routes", Config.toCluster("xds-server")))
        .cluster("xds-server", port);

    CompletableFuture<Void> serving = new CompletableFuture<>();
    try (Meridian meridian = Meridian.start(dir, config)) {
      Server server = XdsServerBuilder
          .forAddress(new InetSocketAddress("127.0.0.1", port), InsecureServerCredentials.create())
          .overrideBootstrapForTest(XdsTestClient.bootstrap(meridian.xdsPort(), "xds-server-1"))
          .xdsServingStatusListener(new XdsServerBuilder.XdsServingStatusListener() {
            @Override
            public void onServing() {
              serving.complete(null);
            }

            @Override
            public void onNotServing(Throwable t) {
              serving.completeExceptionally(t);
            }
          })
          .addService(Greeter.service("xds-server"))
          .build();
      ManagedChannel plain = Grpc.newChannelBuilderForAddress("127.0.0.1", port,
          InsecureChannelCredentials.create()).build();
      try (XdsTestClient client = new XdsTestClient(meridian.xdsPort(), "e2e-node", "greeter")) {
        // start() blocks until grpc-java has its listener; bounded, so that a listener Meridian
        // never serves fails the test instead of hanging it.
        CompletableFuture.runAsync(() -> {
          try {
            server.start();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }).get(20, TimeUnit.SECONDS);
        serving.get(20, TimeUnit.SECONDS);
        // The route's non_forwarding_action lets the server's own service answer.
        assertThat(ClientCalls.blockingUnaryCall(plain, Greeter.HELLO,
            CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), "hi")).isEqualTo("xds-server");
        assertThat(client.helloWhenReady()).isEqualTo("xds-server");
        assertThat(meridian.nacks()).isEmpty();
      } finally {
        plain.shutdownNow();
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }
}
