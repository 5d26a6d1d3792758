package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The standard gRPC health service on the xDS port (issue 24): SERVING exactly when
 * {@code /readyz} says ready, for Kubernetes gRPC probes and load balancers.
 */
class GrpcHealthTest {
  @TempDir Path dir;

  @Test
  void healthIsServingOnceTheConfigIsServedAndNotServingFromTheStartOfAShutdown()
      throws Exception {
    Path config = Files.writeString(dir.resolve("c.yaml"), """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: c
            type: STATIC
        """);
    MeridianServer s = new MeridianServer(
        new MeridianServer.Options(config, "127.0.0.1", 0, 0, 200)
            .withShutdownTimeout(java.time.Duration.ofSeconds(3))).start();
    ManagedChannel ch = ManagedChannelBuilder.forAddress("127.0.0.1", s.xdsPort()).usePlaintext()
        .build();
    try {
      HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(ch);
      assertThat(health.withDeadlineAfter(5, TimeUnit.SECONDS)
          .check(HealthCheckRequest.getDefaultInstance()).getStatus())
          .isEqualTo(ServingStatus.SERVING);
      assertThat(s.isReady()).isTrue();

      // A watch sees the shutdown begin before the port goes away.
      java.util.concurrent.BlockingQueue<ServingStatus> seen =
          new java.util.concurrent.LinkedBlockingQueue<>();
      HealthGrpc.newStub(ch).watch(HealthCheckRequest.getDefaultInstance(),
          new io.grpc.stub.StreamObserver<>() {
            @Override
            public void onNext(io.grpc.health.v1.HealthCheckResponse r) {
              seen.add(r.getStatus());
            }

            @Override
            public void onError(Throwable t) {}

            @Override
            public void onCompleted() {}
          });
      assertThat(seen.poll(5, TimeUnit.SECONDS)).isEqualTo(ServingStatus.SERVING);
      Thread closer = new Thread(s::close);
      closer.start();
      assertThat(seen.poll(5, TimeUnit.SECONDS)).isEqualTo(ServingStatus.NOT_SERVING);
      closer.join(10_000);
    } finally {
      ch.shutdownNow();
      s.close();
    }
  }
}
