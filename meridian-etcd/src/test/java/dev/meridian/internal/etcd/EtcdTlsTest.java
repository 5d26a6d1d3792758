package dev.meridian.internal.etcd;

import static dev.meridian.internal.etcd.EtcdFixture.clusters;
import static dev.meridian.internal.etcd.EtcdFixture.load;
import static dev.meridian.internal.etcd.EtcdFixture.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.config.ReferenceCheck;
import dev.meridian.xds.ResourceType;
import dev.meridian.testing.EtcdProcess;
import dev.meridian.testing.TestCerts;
import io.etcd.jetcd.Client;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** etcds:// (docs/etcd.md): TLS to etcd, with the client certificate etcd requires. */
class EtcdTlsTest {
  @TempDir Path dir;

  @Test
  void etcdsAppliesAndServesOverMutualTls() throws Exception {
    TestCerts.Ca ca = TestCerts.ca("etcd test CA");
    Path caFile = ca.writeCert(dir.resolve("ca.crt"));
    TestCerts.Written server = ca.leaf("etcd").loopback().issue().write(dir, "server");
    TestCerts.Written meridian = ca.leaf("meridian").issue().write(dir, "meridian");
    try (EtcdProcess etcd = EtcdProcess.startTls(
        new EtcdProcess.Tls(server.cert(), server.key(), caFile))) {
      EtcdTarget target = EtcdTarget.parse(etcd.url("/meridian"),
          new EtcdTarget.Tls(caFile, meridian.cert(), meridian.key()));
      assertThat(target.url()).startsWith("etcds://");
      try (Client client = EtcdClients.connect(target)) {
        EtcdApply.Result r = new EtcdApply(client, target).apply(
            load(write(dir.resolve("a"), "c.yaml", clusters(2, 80))), false, false,
            ReferenceCheck.REJECT);
        assertThat(r.written()).isTrue();
      }
      EtcdConfigSourceTest.Sink sink = new EtcdConfigSourceTest.Sink();
      try (EtcdConfigSource source = new EtcdConfigSource(target, new ConfigLoader()).connect()) {
        source.start(sink);
        EtcdConfigSourceTest.await("loaded over TLS", () -> sink.port("c1") == 80);
        assertThat(sink.last().defaults().get(ResourceType.CLUSTER).size()).isEqualTo(2);
      }
    }
  }

  @Test
  void withoutTheClientCertificateEtcdRefusesAndApplySaysSo() throws Exception {
    TestCerts.Ca ca = TestCerts.ca("etcd test CA");
    Path caFile = ca.writeCert(dir.resolve("ca.crt"));
    TestCerts.Written server = ca.leaf("etcd").loopback().issue().write(dir, "server");
    try (EtcdProcess etcd = EtcdProcess.startTls(
        new EtcdProcess.Tls(server.cert(), server.key(), caFile))) {
      EtcdTarget target = EtcdTarget.parse(etcd.url("/meridian"),
          new EtcdTarget.Tls(caFile, null, null));
      try (Client client = EtcdClients.connect(target)) {
        assertThatThrownBy(() -> new EtcdApply(client, target).apply(
            load(write(dir.resolve("a"), "c.yaml", clusters(1, 80))), false, false,
            ReferenceCheck.REJECT))
            .isInstanceOf(EtcdApply.Failed.class).hasMessageContaining("cannot read /meridian");
      }
    }
  }

  @Test
  void tlsFlagsAreForEtcdsOnly() {
    assertThatThrownBy(() -> EtcdTarget.parse("etcd://127.0.0.1:2379/m",
        new EtcdTarget.Tls(Path.of("ca.crt"), null, null)))
        .hasMessageContaining("are for etcds://");
    assertThatThrownBy(() -> EtcdTarget.parse("etcd://127.0.0.1:2379", null))
        .hasMessageContaining("a key prefix is required");
    assertThatThrownBy(() -> EtcdTarget.parse("etcd://127.0.0.1/m", null))
        .hasMessageContaining("is not HOST:PORT");
    assertThat(EtcdTarget.parse("etcd://a:1,b:2/m/x", null).endpoints())
        .containsExactly("http://a:1", "http://b:2");
  }
}
