package dev.meridian.testing;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Certificates and keys made by the tests at run time (nothing is committed): a CA and the
 * certificates it issues, with SPIFFE URI SANs and DNS/IP SANs, written as PEM (keys as PKCS#8
 * {@code BEGIN PRIVATE KEY}, what {@code openssl genpkey} writes). EC P-256 keys: fast to make.
 */
public final class TestCerts {
  private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

  private TestCerts() {}

  /** A new self-signed CA, valid from an hour ago for a day. */
  public static Ca ca(String commonName) {
    try {
      KeyPair keys = newKeyPair();
      X500Name name = new X500Name("CN=" + commonName);
      Instant now = Instant.now();
      X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(name, serial(),
          Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(1))), name,
          keys.getPublic());
      JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      b.addExtension(Extension.keyUsage, true,
          new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      b.addExtension(Extension.subjectKeyIdentifier, false,
          ext.createSubjectKeyIdentifier(keys.getPublic()));
      return new Ca(sign(b, keys.getPrivate()), keys);
    } catch (Exception e) {
      throw new IllegalStateException("cannot make a test CA", e);
    }
  }

  /** A CA and what it issues. */
  public static final class Ca {
    private final X509Certificate cert;
    private final KeyPair keys;

    private Ca(X509Certificate cert, KeyPair keys) {
      this.cert = cert;
      this.keys = keys;
    }

    public X509Certificate cert() {
      return cert;
    }

    /** A certificate for both server and client use; set its SANs and validity, then issue. */
    public LeafBuilder leaf(String commonName) {
      return new LeafBuilder(this, commonName);
    }

    /** Writes the CA certificate as PEM; returns {@code file}. */
    public Path writeCert(Path file) {
      return writePem(file, List.of(cert));
    }
  }

  /** What a {@link Ca} is asked to issue. */
  public static final class LeafBuilder {
    private final Ca ca;
    private final String commonName;
    private final List<GeneralName> sans = new ArrayList<>();
    private Instant notBefore = Instant.now().minus(Duration.ofHours(1));
    private Instant notAfter = Instant.now().plus(Duration.ofDays(1));

    private LeafBuilder(Ca ca, String commonName) {
      this.ca = ca;
      this.commonName = commonName;
    }

    /** A URI SAN, e.g. a SPIFFE ID {@code spiffe://example.org/ns/payments/sa/api}. */
    public LeafBuilder uri(String uri) {
      sans.add(new GeneralName(GeneralName.uniformResourceIdentifier, uri));
      return this;
    }

    public LeafBuilder dns(String name) {
      sans.add(new GeneralName(GeneralName.dNSName, name));
      return this;
    }

    public LeafBuilder ip(String address) {
      sans.add(new GeneralName(GeneralName.iPAddress, address));
      return this;
    }

    /** Loopback names: DNS {@code localhost}, IP {@code 127.0.0.1} (a server's certificate). */
    public LeafBuilder loopback() {
      return dns("localhost").ip("127.0.0.1");
    }

    public LeafBuilder validity(Instant from, Instant to) {
      this.notBefore = from;
      this.notAfter = to;
      return this;
    }

    /** Expired an hour ago. */
    public LeafBuilder expired() {
      return validity(Instant.now().minus(Duration.ofDays(2)), Instant.now().minus(Duration.ofHours(1)));
    }

    public Leaf issue() {
      try {
        KeyPair keys = newKeyPair();
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(ca.cert, serial(),
            Date.from(notBefore), Date.from(notAfter), new X500Name("CN=" + commonName),
            keys.getPublic());
        JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
        b.addExtension(Extension.keyUsage, true,
            new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
        b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(
            new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
        b.addExtension(Extension.subjectKeyIdentifier, false,
            ext.createSubjectKeyIdentifier(keys.getPublic()));
        b.addExtension(Extension.authorityKeyIdentifier, false,
            ext.createAuthorityKeyIdentifier(ca.cert));
        if (!sans.isEmpty()) {
          b.addExtension(Extension.subjectAlternativeName, false,
              new GeneralNames(sans.toArray(GeneralName[]::new)));
        }
        return new Leaf(sign(b, ca.keys.getPrivate()), keys.getPrivate(), ca.cert);
      } catch (Exception e) {
        throw new IllegalStateException("cannot issue a test certificate", e);
      }
    }
  }

  /** An issued certificate, its private key and its issuer. */
  public record Leaf(X509Certificate cert, PrivateKey key, X509Certificate issuer) {
    /** Writes the certificate as PEM; returns {@code file}. */
    public Path writeCert(Path file) {
      return writePem(file, List.of(cert));
    }

    /** Writes the private key as PKCS#8 PEM; returns {@code file}. */
    public Path writeKey(Path file) {
      return writePem(file, List.of(key));
    }

    /** Writes certificate and key into {@code dir} as {@code NAME.crt} and {@code NAME.key}. */
    public Written write(Path dir, String name) {
      return new Written(writeCert(dir.resolve(name + ".crt")), writeKey(dir.resolve(name + ".key")));
    }
  }

  /** Where a {@link Leaf} was written. */
  public record Written(Path cert, Path key) {}

  /** PEM text of certificates or keys. */
  public static String pem(List<?> objects) {
    StringWriter out = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(out)) {
      for (Object o : objects) {
        w.writeObject(o instanceof PrivateKey k ? new org.bouncycastle.openssl.jcajce
            .JcaPKCS8Generator(k, null) : o);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString();
  }

  private static Path writePem(Path file, List<?> objects) {
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      // Written aside and renamed: a watcher never reads half a file.
      Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
      Files.writeString(tmp, pem(objects), StandardCharsets.US_ASCII);
      Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static KeyPair newKeyPair() throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"));
    return g.generateKeyPair();
  }

  private static BigInteger serial() {
    return BigInteger.valueOf(SERIAL.incrementAndGet());
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, PrivateKey key)
      throws Exception {
    ContentSigner signer = new JcaContentSignerBuilder("SHA256withECDSA").build(key);
    return new JcaX509CertificateConverter().getCertificate(b.build(signer));
  }
}
