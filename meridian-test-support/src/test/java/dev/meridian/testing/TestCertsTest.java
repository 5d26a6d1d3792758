package dev.meridian.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TestCertsTest {
  @TempDir Path dir;

  @Test
  void issuedCertificateChainsToItsCaAndCarriesItsSans() throws Exception {
    TestCerts.Ca ca = TestCerts.ca("test-ca");
    TestCerts.Leaf leaf = ca.leaf("api").uri("spiffe://example.org/ns/payments/sa/api").loopback().issue();
    leaf.cert().verify(ca.cert().getPublicKey());
    leaf.cert().checkValidity();
    assertThat(leaf.cert().getSubjectAlternativeNames()).extracting(san -> (Object) san.get(1))
        .containsExactly("spiffe://example.org/ns/payments/sa/api", "localhost", "127.0.0.1");
  }

  @Test
  void writtenPemReadsBackAndTheKeyIsPkcs8() throws Exception {
    TestCerts.Ca ca = TestCerts.ca("test-ca");
    TestCerts.Written w = ca.leaf("api").dns("api.example.org").issue().write(dir, "api");
    try (InputStream in = Files.newInputStream(w.cert())) {
      X509Certificate c = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
      assertThat(c.getSubjectX500Principal().getName()).isEqualTo("CN=api");
    }
    assertThat(Files.readString(w.key())).startsWith("-----BEGIN PRIVATE KEY-----");
    assertThat(Files.readString(ca.writeCert(dir.resolve("ca.crt")))).startsWith("-----BEGIN CERTIFICATE-----");
  }

  @Test
  void expiredCertificateFailsItsValidityCheck() {
    X509Certificate c = TestCerts.ca("test-ca").leaf("old").expired().issue().cert();
    assertThatThrownBy(c::checkValidity).isInstanceOf(CertificateExpiredException.class);
  }

  @Test
  void certificateWithoutSansHasNone() throws Exception {
    assertThat(TestCerts.ca("test-ca").leaf("bare").issue().cert().getSubjectAlternativeNames()).isNull();
  }
}
