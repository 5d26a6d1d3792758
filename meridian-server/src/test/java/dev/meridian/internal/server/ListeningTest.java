package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.InsecureServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ports serve listens on, named by their flags when one cannot be had. */
class ListeningTest {
  @TempDir Path dir;

  @Test
  void aBusyPortFailsTheStartBeforeTheConfigIsRead() throws Exception {
    // The config is not even valid: a start that read it would fail on it, not on the port.
    Path config = dir.resolve("c.yaml");
    Files.writeString(config, "resources: [ { \"@type\": nonsense } ]\n");
    try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = held.getLocalPort();
      MeridianServer server = new MeridianServer(
          new MeridianServer.Options(config, "127.0.0.1", 0, port, 1000));
      assertThatThrownBy(server::start).isInstanceOf(MeridianServer.CannotListen.class)
          .hasMessage("cannot listen on 127.0.0.1:" + port + " (--http-port " + port + "): the "
              + "address is already in use: another process listens on it; stop it, or choose "
              + "another port with --http-port (0: any free port)");
      assertThat(server.isClosing()).isTrue();
    }
  }

  /** What gRPC throws for a port taken after the check (by another process, say). */
  @Test
  void aPortTakenAfterTheCheckIsStillNamedWithItsFlag() throws Exception {
    try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      int port = held.getLocalPort();
      IOException thrown = null;
      try {
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port),
            InsecureServerCredentials.create()).build().start().shutdownNow();
      } catch (IOException e) {
        thrown = e;
      }
      assertThat(thrown).as("gRPC binding a busy port").isNotNull();
      assertThat(Listening.translate(
          new Listening.Port("--xds-port", port, "--bind", "127.0.0.1"), thrown))
          .isInstanceOf(MeridianServer.CannotListen.class)
          .hasMessage("cannot listen on 127.0.0.1:" + port + " (--xds-port " + port + "): the "
              + "address is already in use: another process listens on it; stop it, or choose "
              + "another port with --xds-port (0: any free port)");
    }
  }

  @Test
  void aBindAddressThatDoesNotResolveIsNamedWithItsFlag() {
    assertThatThrownBy(() -> Listening.check(List.of(
        new Listening.Port("--xds-port", 0, "--bind", "no-such-host.invalid"))))
        .hasMessage("cannot listen on no-such-host.invalid:0 (--bind no-such-host.invalid): "
            + "unknown host no-such-host.invalid; give an address of this machine with --bind "
            + "(0.0.0.0: all of them)");
  }

  @Test
  void aWildcardAndALoopbackAddressOnOnePortAreOnePort() {
    assertThatThrownBy(() -> Listening.check(List.of(
        new Listening.Port("--xds-port", 18999, "--bind", "0.0.0.0"),
        new Listening.Port("--http-port", 18999, "--admin-bind", "127.0.0.1"))))
        .hasMessage("cannot listen on 127.0.0.1:18999 (--http-port 18999): --xds-port is 18999 "
            + "too, on 0.0.0.0:18999; give each port a number of its own");
  }
}
