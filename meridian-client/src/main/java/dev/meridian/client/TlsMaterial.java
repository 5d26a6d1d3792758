package dev.meridian.client;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Certificates and keys read from PEM files and checked before use: each problem is a
 * {@link TlsFileException} that names the file and says what is wrong with it.
 */
final class TlsMaterial {
  private static final Pattern PKCS8 = Pattern.compile(
      "-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");
  private static final Pattern TRADITIONAL = Pattern.compile("-----BEGIN (RSA|EC) PRIVATE KEY-----");
  /** What PKCS#8 keys hold; an algorithm's KeyFactory rejects another's key. */
  private static final List<String> KEY_ALGORITHMS = List.of("EC", "RSA", "Ed25519", "Ed448",
      "RSASSA-PSS");

  private TlsMaterial() {}

  /** A certificate chain (leaf first) and its private key. */
  record Identity(X509Certificate[] chain, PrivateKey key) {}

  static X509Certificate[] trustRoots(Path caFile) throws TlsFileException {
    return certificates(TlsConfig.Role.CA_CERTIFICATE, caFile,
        read(TlsConfig.Role.CA_CERTIFICATE, caFile));
  }

  static Identity identity(Path certFile, Path keyFile) throws TlsFileException {
    return identity(certFile, read(TlsConfig.Role.CERTIFICATE, certFile), keyFile,
        read(TlsConfig.Role.PRIVATE_KEY, keyFile));
  }

  static Identity identity(Path certFile, byte[] certPem, Path keyFile, byte[] keyPem)
      throws TlsFileException {
    X509Certificate[] chain = certificates(TlsConfig.Role.CERTIFICATE, certFile, certPem);
    PrivateKey key = privateKey(keyFile, keyPem);
    checkPair(certFile, chain[0], keyFile, key);
    return new Identity(chain, key);
  }

  static byte[] read(TlsConfig.Role role, Path file) throws TlsFileException {
    try {
      return Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw new TlsFileException(role, file, "no such file", e);
    } catch (AccessDeniedException e) {
      throw new TlsFileException(role, file, "permission denied", e);
    } catch (IOException e) {
      throw new TlsFileException(role, file, "cannot read it: " + e.getMessage(), e);
    }
  }

  static X509Certificate[] certificates(TlsConfig.Role role, Path file, byte[] pem)
      throws TlsFileException {
    Collection<? extends Certificate> certs;
    try {
      certs = CertificateFactory.getInstance("X.509")
          .generateCertificates(new ByteArrayInputStream(pem));
    } catch (CertificateException e) {
      throw new TlsFileException(role, file, "not a PEM certificate (" + e.getMessage() + ")", e);
    }
    if (certs.isEmpty()) {
      throw new TlsFileException(role, file,
          "holds no certificate (expected PEM: -----BEGIN CERTIFICATE-----)", null);
    }
    return certs.toArray(X509Certificate[]::new);
  }

  static PrivateKey privateKey(Path file, byte[] pem) throws TlsFileException {
    TlsConfig.Role role = TlsConfig.Role.PRIVATE_KEY;
    String text = new String(pem, StandardCharsets.US_ASCII);
    Matcher m = PKCS8.matcher(text);
    if (!m.find()) {
      Matcher traditional = TRADITIONAL.matcher(text);
      if (traditional.find()) {
        throw new TlsFileException(role, file, "holds a BEGIN " + traditional.group(1)
            + " PRIVATE KEY key; convert it to PKCS#8 (BEGIN PRIVATE KEY): "
            + "openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8", null);
      }
      if (text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
        throw new TlsFileException(role, file, "holds an encrypted key; give it unencrypted "
            + "(openssl pkcs8 -topk8 -nocrypt)", null);
      }
      throw new TlsFileException(role, file,
          "holds no private key (expected PEM, PKCS#8: -----BEGIN PRIVATE KEY-----)", null);
    }
    PKCS8EncodedKeySpec spec;
    try {
      spec = new PKCS8EncodedKeySpec(Base64.getMimeDecoder().decode(m.group(1)));
    } catch (IllegalArgumentException e) {
      throw new TlsFileException(role, file, "the key is not valid base64", e);
    }
    for (String algorithm : KEY_ALGORITHMS) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(spec);
      } catch (GeneralSecurityException e) {
        // not this algorithm's key: try the next
      }
    }
    throw new TlsFileException(role, file, "the key is damaged or of an unsupported algorithm "
        + "(supported: " + String.join(", ", KEY_ALGORITHMS) + ")", null);
  }

  /**
   * The key must be the certificate's: a mismatched pair would only fail later, in every
   * handshake. Checked by signing with the key and verifying with the certificate.
   */
  private static void checkPair(Path certFile, X509Certificate cert, Path keyFile, PrivateKey key)
      throws TlsFileException {
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      case "EdDSA", "Ed25519", "Ed448" -> key.getAlgorithm();
      default -> null; // RSASSA-PSS needs parameters; its handshakes will tell
    };
    if (algorithm == null) {
      return;
    }
    byte[] probe = "meridian: does this key belong to this certificate".getBytes(
        StandardCharsets.US_ASCII);
    boolean matches;
    try {
      Signature sign = Signature.getInstance(algorithm);
      sign.initSign(key);
      sign.update(probe);
      Signature verify = Signature.getInstance(algorithm);
      verify.initVerify(cert.getPublicKey());
      verify.update(probe);
      matches = verify.verify(sign.sign());
    } catch (GeneralSecurityException e) {
      matches = false; // e.g. an RSA key for an EC certificate
    }
    if (!matches) {
      throw new TlsFileException(TlsConfig.Role.PRIVATE_KEY, keyFile,
          "is not the private key of the certificate in " + certFile, null);
    }
  }
}
