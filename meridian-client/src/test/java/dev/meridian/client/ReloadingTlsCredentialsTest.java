package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.testing.TestCerts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The re-reading of gRFC A65 TLS files, driven by a fake clock. */
class ReloadingTlsCredentialsTest {
  static final Duration REFRESH = Duration.ofSeconds(600);

  @TempDir
  Path dir;
  private final FakeScheduler scheduler = new FakeScheduler();
  private final TestCerts.Ca ca = TestCerts.ca("reload-ca");

  private TlsConfig config(TestCerts.Written identity) {
    return new TlsConfig(dir.resolve("ca.crt"), identity.cert(), identity.key(), REFRESH);
  }

  @Test
  void openFailsNamingTheFileThatCannotBeUsed() {
    ca.writeCert(dir.resolve("ca.crt"));
    TestCerts.Written id = new TestCerts.Written(dir.resolve("c.crt"), dir.resolve("c.key"));
    ca.leaf("c").issue().writeCert(id.cert());
    assertThatThrownBy(() -> ReloadingTlsCredentials.open(config(id), scheduler))
        .isInstanceOfSatisfying(TlsFileException.class, e -> {
          assertThat(e.role()).isEqualTo(TlsConfig.Role.PRIVATE_KEY);
          assertThat(e.file()).isEqualTo(id.key());
          assertThat(e).hasMessage(id.key() + ": no such file");
        });
    assertThat(scheduler.pending()).isZero();
  }

  @Test
  void filesThatAppearAfterTheStartAreUsedAtTheNextRefresh() {
    TestCerts.Written id = new TestCerts.Written(dir.resolve("c.crt"), dir.resolve("c.key"));
    try (ReloadingTlsCredentials tls = ReloadingTlsCredentials.start(config(id), scheduler)) {
      assertThat(tls.problem()).endsWith("ca.crt: no such file");
      assertThat(tls.certificate()).isNull();

      ca.writeCert(dir.resolve("ca.crt"));
      ca.leaf("c").issue().write(dir, "c");
      scheduler.forward(REFRESH);
      assertThat(tls.problem()).isNull();
      assertThat(tls.certificate().getSubjectX500Principal().getName()).isEqualTo("CN=c");
    }
  }

  @Test
  void onlyAChangedValidPairReplacesTheCertificate() throws Exception {
    ca.writeCert(dir.resolve("ca.crt"));
    TestCerts.Written id = ca.leaf("first").issue().write(dir, "c");
    try (ReloadingTlsCredentials tls = ReloadingTlsCredentials.open(config(id), scheduler)) {
      scheduler.forward(REFRESH);
      assertThat(tls.reload()).as("nothing changed").isFalse();

      Files.writeString(id.cert(), "not a certificate");
      scheduler.forward(REFRESH);
      assertThat(tls.problem()).startsWith(id.cert() + ": ");
      assertThat(tls.certificate().getSubjectX500Principal().getName()).isEqualTo("CN=first");

      ca.leaf("second").issue().write(dir, "c");
      scheduler.forward(REFRESH);
      assertThat(tls.problem()).isNull();
      assertThat(tls.certificate().getSubjectX500Principal().getName()).isEqualTo("CN=second");
    }
  }

  @Test
  void closeStopsTheRefreshes() {
    ca.writeCert(dir.resolve("ca.crt"));
    TestCerts.Written id = ca.leaf("c").issue().write(dir, "c");
    ReloadingTlsCredentials tls = ReloadingTlsCredentials.start(config(id), scheduler);
    assertThat(scheduler.pending()).isEqualTo(1);
    tls.close();
    assertThat(scheduler.pending()).isZero();
  }

  @Test
  void systemRootsWithoutAClientCertificateReadNoFiles() {
    try (ReloadingTlsCredentials tls = ReloadingTlsCredentials.start(TlsConfig.systemRoots(),
        scheduler)) {
      assertThat(tls.problem()).isNull();
      assertThat(tls.certificate()).isNull();
      assertThat(scheduler.pending()).isZero();
    }
  }
}
