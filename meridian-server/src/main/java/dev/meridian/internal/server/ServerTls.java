package dev.meridian.internal.server;

import dev.meridian.internal.protocol.LogLine;
import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import io.grpc.util.CertificateUtils;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;

/**
 * The TLS material of the xDS and REST ports (issue 20): a certificate chain and its private key,
 * and optionally the CA bundle client certificates must chain to (mTLS), read from PEM files. The
 * files are re-read when they change ({@link #reloadIfChanged}): new handshakes use the new
 * material, existing connections continue. A new file that does not read, or a key that does not
 * belong to its certificate, is logged and the previous material stays in use.
 */
final class ServerTls {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.server");

  /** Where the material is: PEM files; {@code clientCa} null: no client certificate is asked for. */
  record Files(Path cert, Path key, Path clientCa) {}

  /** What was read, each file's bytes, with the parsed material. */
  private record Material(List<X509Certificate> chain, PrivateKey key, List<X509Certificate> roots,
      String digest) {}

  private final Files files;
  private final Clock clock;
  /** Told of each reload of changed files: true when it took, false when it was refused. */
  private final java.util.function.Consumer<Boolean> onReload;
  private final AdvancedTlsX509KeyManager keys = new AdvancedTlsX509KeyManager();
  private final AdvancedTlsX509TrustManager trust;
  /** Digest of the files in use, and of the last files that failed (not logged twice). */
  private String inUse;
  private String lastFailed;

  private ServerTls(Files files, Clock clock, java.util.function.Consumer<Boolean> onReload)
      throws GeneralSecurityException {
    this.files = files;
    this.clock = clock;
    this.onReload = onReload;
    this.trust = files.clientCa() == null ? null : AdvancedTlsX509TrustManager.newBuilder()
        .setVerification(AdvancedTlsX509TrustManager.Verification.CERTIFICATE_ONLY_VERIFICATION)
        .build();
  }

  /**
   * Reads the files; throws with every problem named (the file and what is wrong) if they cannot
   * serve, as a start with a bad certificate must not listen at all.
   */
  static ServerTls load(Files files, Clock clock, java.util.function.Consumer<Boolean> onReload)
      throws InvalidTlsFiles {
    try {
      ServerTls tls = new ServerTls(files, clock, onReload);
      tls.use(tls.read());
      return tls;
    } catch (GeneralSecurityException e) {
      throw new InvalidTlsFiles(List.of("TLS: " + e.getMessage()));
    }
  }

  /** TLS files that cannot be used, with each problem. */
  static final class InvalidTlsFiles extends Exception {
    final List<String> problems;

    InvalidTlsFiles(List<String> problems) {
      super(String.join("; ", problems));
      this.problems = List.copyOf(problems);
    }
  }

  boolean requiresClientCertificates() {
    return trust != null;
  }

  /** Credentials for a gRPC server: TLS, and with a client CA, mTLS (a certificate required). */
  ServerCredentials grpcCredentials() {
    TlsServerCredentials.Builder b = TlsServerCredentials.newBuilder().keyManager(keys);
    if (trust != null) {
      b.trustManager(new NoIssuerNames(trust)).clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
    }
    return b.build();
  }

  /** The same material for an HTTPS server (the REST port); the caller asks for client certs. */
  SSLContext sslContext() throws GeneralSecurityException {
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(new KeyManager[] {keys},
        trust == null ? null : new TrustManager[] {new NoIssuerNames(trust)}, null);
    return ctx;
  }

  /**
   * Verifies client certificates with the current roots, but names no acceptable issuers in the
   * handshake. The names would be fixed when the TLS context is built (OpenSSL's client CA list),
   * so after a rotation to a new client CA, clients that pick their certificate by the names the
   * server sends (grpc-java's, the JDK's) would send none. Verification is what decides.
   */
  private static final class NoIssuerNames extends javax.net.ssl.X509ExtendedTrustManager {
    private final javax.net.ssl.X509ExtendedTrustManager roots;

    NoIssuerNames(javax.net.ssl.X509ExtendedTrustManager roots) {
      this.roots = roots;
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType,
        java.net.Socket socket) throws java.security.cert.CertificateException {
      roots.checkClientTrusted(chain, authType, socket);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType,
        javax.net.ssl.SSLEngine engine) throws java.security.cert.CertificateException {
      roots.checkClientTrusted(chain, authType, engine);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType)
        throws java.security.cert.CertificateException {
      roots.checkClientTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType,
        java.net.Socket socket) throws java.security.cert.CertificateException {
      roots.checkServerTrusted(chain, authType, socket);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType,
        javax.net.ssl.SSLEngine engine) throws java.security.cert.CertificateException {
      roots.checkServerTrusted(chain, authType, engine);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType)
        throws java.security.cert.CertificateException {
      roots.checkServerTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }

  /** Re-reads the files if their bytes changed; keeps the material in use if the new is bad. */
  synchronized void reloadIfChanged() {
    try {
      String digest = digestQuietly();
      if (digest.equals(inUse)) {
        lastFailed = null; // back to what is in use: a later bad file is said again
        return;
      }
      if (digest.equals(lastFailed)) {
        return; // refused already: said once
      }
      Material next;
      try {
        next = read();
      } catch (InvalidTlsFiles e) {
        refused(digest, e.getMessage());
        return;
      }
      try {
        use(next);
      } catch (GeneralSecurityException e) {
        refused(next.digest(), e.getMessage());
        return;
      }
      lastFailed = null;
      onReload.accept(true);
      LOG.info(LogLine.of("tls_reload").kv("result", "ok")
          .kv("cert", files.cert()).kv("not_after", next.chain().get(0).getNotAfter().toInstant())
          .toString());
    } catch (RuntimeException e) {
      // Never let a surprise end the scheduled re-reads: rotation must keep working.
      LOG.warn(LogLine.of("tls_reload").kv("result", "failed")
          .kv("serving", "previous certificates").kv("error", String.valueOf(e)).toString());
    }
  }

  private void refused(String digest, String why) {
    lastFailed = digest;
    onReload.accept(false);
    LOG.warn(LogLine.of("tls_reload").kv("result", "failed")
        .kv("serving", "previous certificates").kv("error", why).toString());
  }

  private void use(Material m) throws GeneralSecurityException {
    if (trust != null) { // first: if it fails, neither the roots nor the key changed
      try {
        trust.updateTrustCredentials(m.roots().toArray(X509Certificate[]::new));
      } catch (IOException e) {
        throw new GeneralSecurityException(e.getMessage(), e);
      }
    }
    keys.updateIdentityCredentials(m.chain().toArray(X509Certificate[]::new), m.key());
    inUse = m.digest();
  }

  /** Reads and checks every file; every problem is named with its file. */
  private Material read() throws InvalidTlsFiles {
    List<String> problems = new ArrayList<>();
    byte[] certBytes = bytes(files.cert(), "--tls-cert", problems);
    byte[] keyBytes = bytes(files.key(), "--tls-key", problems);
    byte[] caBytes = files.clientCa() == null ? new byte[0]
        : bytes(files.clientCa(), "--tls-client-ca", problems);
    List<X509Certificate> chain = certBytes == null ? null
        : certificates(certBytes, "--tls-cert " + files.cert(), problems);
    PrivateKey key = null;
    if (keyBytes != null) {
      try {
        key = CertificateUtils.getPrivateKey(new ByteArrayInputStream(keyBytes));
      } catch (Exception e) {
        problems.add("--tls-key " + files.key() + ": not a PEM private key (PKCS#8, "
            + "'BEGIN PRIVATE KEY'; convert with 'openssl pkcs8 -topk8 -nocrypt'): " + e.getMessage());
      }
    }
    List<X509Certificate> roots = files.clientCa() == null || caBytes == null ? List.of()
        : certificates(caBytes, "--tls-client-ca " + files.clientCa(), problems);
    if (chain != null && !chain.isEmpty()) {
      X509Certificate leaf = chain.get(0);
      try {
        leaf.checkValidity(java.util.Date.from(clock.instant()));
      } catch (CertificateExpiredException e) {
        problems.add("--tls-cert " + files.cert() + ": expired on " + leaf.getNotAfter().toInstant());
      } catch (CertificateNotYetValidException e) {
        problems.add("--tls-cert " + files.cert() + ": not valid before "
            + leaf.getNotBefore().toInstant());
      }
      if (key != null && !belongs(key, leaf)) {
        problems.add("--tls-key " + files.key() + " is not the private key of --tls-cert "
            + files.cert());
      }
    }
    if (!problems.isEmpty()) {
      throw new InvalidTlsFiles(problems);
    }
    return new Material(chain, key, roots, digest(certBytes, keyBytes, caBytes));
  }

  private static byte[] bytes(Path file, String flag, List<String> problems) {
    try {
      return java.nio.file.Files.readAllBytes(file);
    } catch (IOException e) {
      problems.add(flag + " " + file + ": cannot be read (" + e.getClass().getSimpleName()
          + (e.getMessage() == null ? "" : ": " + e.getMessage()) + ")");
      return null;
    }
  }

  private static List<X509Certificate> certificates(byte[] pem, String what, List<String> problems) {
    try {
      X509Certificate[] certs = CertificateUtils.getX509Certificates(new ByteArrayInputStream(pem));
      if (certs.length == 0) {
        problems.add(what + ": no PEM certificate in the file");
      }
      return Arrays.asList(certs);
    } catch (Exception e) {
      problems.add(what + ": not PEM certificates: " + e.getMessage());
      return null;
    }
  }

  /** Whether {@code key} is the private key of {@code cert}: it signs what the cert verifies. */
  private static boolean belongs(PrivateKey key, X509Certificate cert) {
    String algorithm = switch (key.getAlgorithm()) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      case "Ed25519", "Ed448", "EdDSA" -> "EdDSA";
      default -> null;
    };
    if (algorithm == null) {
      return true; // cannot tell: the handshake will
    }
    try {
      byte[] challenge = new byte[32];
      new SecureRandom().nextBytes(challenge);
      Signature sign = Signature.getInstance(algorithm);
      sign.initSign(key);
      sign.update(challenge);
      byte[] signature = sign.sign();
      Signature verify = Signature.getInstance(algorithm);
      verify.initVerify(cert.getPublicKey());
      verify.update(challenge);
      return verify.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private String digestQuietly() {
    try {
      byte[] ca = files.clientCa() == null ? new byte[0]
          : java.nio.file.Files.readAllBytes(files.clientCa());
      return digest(java.nio.file.Files.readAllBytes(files.cert()),
          java.nio.file.Files.readAllBytes(files.key()), ca);
    } catch (IOException e) {
      return "unreadable";
    }
  }

  private static String digest(byte[]... parts) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      for (byte[] p : parts) {
        d.update(Integer.toString(p == null ? -1 : p.length).getBytes());
        if (p != null) {
          d.update(p);
        }
      }
      return HexFormat.of().formatHex(d.digest());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
