package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ValidateCommandTest {
  @TempDir Path dir;
  final StringWriter out = new StringWriter();
  final StringWriter err = new StringWriter();

  int run(String... args) {
    CommandLine cl = new CommandLine(new Main());
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    return cl.execute(args);
  }

  Path write(String yaml) throws Exception {
    Path f = dir.resolve("c.yaml");
    Files.writeString(f, yaml);
    return f;
  }

  static final String MAGLEV = "resources:\n- {'@type': type.googleapis.com/envoy.config.cluster.v3.Cluster,"
      + " name: greeter, type: EDS, lb_policy: MAGLEV,"
      + " eds_cluster_config: {eds_config: {ads: {}, resource_api_version: V3}}}\n";

  @Test
  void grpcProfileExitsOneAndNamesResourceAndFieldWhenGrpcWouldNack() throws Exception {
    assertThat(run("validate", "--config", write(MAGLEV).toString(), "--profile", "grpc")).isEqualTo(1);
    assertThat(out.toString()).contains("ERROR Cluster greeter: lb_policy:")
        .contains("grpc profile: 1 error(s), 0 warning(s)");
  }

  @Test
  void withoutProfileTheSameConfigIsValid() throws Exception {
    assertThat(run("validate", "--config", write(MAGLEV).toString())).isEqualTo(0);
    assertThat(out.toString()).contains("valid: 1 resources");
  }

  @Test
  void anInvalidConfigExitsTwo() throws Exception {
    assertThat(run("validate", "--config", write("resources: [{name: x}]\n").toString())).isEqualTo(2);
    assertThat(err.toString()).contains("invalid config");
  }

  @Test
  void theBundledProxylessExampleHasNoGrpcFindings() {
    Path example = Path.of("..", "examples", "proxyless-grpc", "meridian.yaml");
    assertThat(run("validate", "--config", example.toString(), "--profile", "grpc")).isEqualTo(0);
    assertThat(out.toString()).contains("grpc profile: 0 error(s), 0 warning(s)");
  }
}
