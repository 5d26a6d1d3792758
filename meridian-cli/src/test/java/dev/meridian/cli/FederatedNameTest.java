package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.internal.server.MeridianServer;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * An {@code xdstp://} name asked of one {@code --server} (no bootstrap) goes to that server,
 * whatever its authority, in its canonical form (gRFC A47): it is answered at once, not after
 * the 10 s timeout.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FederatedNameTest {
  static final String NAME =
      "xdstp://meridian.test/envoy.config.cluster.v3.Cluster/prod/payments?a=1&b=2";
  private MeridianServer server;
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    Path config = dir.resolve("config.yaml");
    Files.writeString(config, """
        resources:
          - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
            name: "%s"
            type: STATIC
            connect_timeout: 1s
            load_assignment:
              cluster_name: payments
              endpoints:
                - lb_endpoints:
                    - endpoint: { address: { socket_address: { address: 127.0.0.1, port_value: 8080 } } }
        """.formatted(NAME));
    server = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 1000))
        .start();
  }

  @AfterAll
  void stop() {
    server.close();
  }

  private int get(String... args) {
    out.reset();
    err.reset();
    String[] all = new String[args.length + 3];
    all[0] = "get";
    all[1] = "--server";
    all[2] = "127.0.0.1:" + server.xdsPort();
    System.arraycopy(args, 0, all, 3, args.length);
    return LargeFleetTest.run(out, err, all);
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  /** {@code get ARGS} succeeds long before the 10 s timeout and prints the name. */
  private void answeredAtOnce(String... args) {
    long start = System.nanoTime();
    assertThat(get(args)).as(err.toString(StandardCharsets.UTF_8)).isZero();
    assertThat(System.nanoTime() - start).as("answered at once")
        .isLessThan(TimeUnit.SECONDS.toNanos(9));
    assertThat(out()).isEqualTo("clusters/" + NAME + "\n");
  }

  @Test
  void theWildcardListsTheFederatedName() {
    answeredAtOnce("clusters", "-o", "name");
  }

  @Test
  void aFederatedNameAskedOfOneServerIsAnsweredByIt() {
    answeredAtOnce("--type", "clusters", "--name", NAME, "-o", "name");
  }

  @Test
  void aNonCanonicalSpellingIsCanonicalizedBeforeItIsSent() {
    answeredAtOnce("clusters", NAME.replace("?a=1&b=2", "?b=2&a=1"), "-o", "name");
  }

  @Test
  void aFederatedNameOverDeltaIsAnsweredToo() {
    answeredAtOnce("clusters", NAME.replace("?a=1&b=2", "?b=2&a=1"), "--delta", "-o", "name");
  }

  @Test
  void aFederatedNameTheServerDoesNotHaveDoesNotExistAtOnce() {
    String other = "xdstp://meridian.test/envoy.config.cluster.v3.Cluster/prod/nope";
    long start = System.nanoTime();
    assertThat(get("clusters", other)).isEqualTo(GetCommand.NOT_FOUND);
    assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(9));
    assertThat(err.toString(StandardCharsets.UTF_8))
        .isEqualTo("meridian get: clusters " + other + " does not exist\n");
  }
}
