package dev.meridian.client;

import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.Objects;

/**
 * gRPC channel credentials for a {@link TlsConfig} (gRFC A65) whose files are re-read every
 * {@code refresh_interval}: a rotated CA bundle, or a rotated certificate and key, is used by the
 * next TLS handshake (connections already up keep theirs). A file is applied when its content
 * changed and it is valid (certificates parse; the key parses and belongs to the certificate); a
 * bad new file is logged and the previous material stays in use until a good one replaces it.
 *
 * <p>The material sits in grpc-java's {@link AdvancedTlsX509KeyManager} and
 * {@link AdvancedTlsX509TrustManager}, which swap it safely under running handshakes; the files
 * are read here rather than by their own file watchers, which poll at least once a minute and
 * detect changes by modification time (a rename can keep it) and would install a key that does
 * not match its certificate.
 */
public final class ReloadingTlsCredentials implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.client");

  private final TlsConfig config;
  private final Scheduler scheduler;
  private final AdvancedTlsX509TrustManager trust;
  private final AdvancedTlsX509KeyManager identity;
  private final ChannelCredentials credentials;
  // The content last applied (guarded by this): a file is applied again only when it changed.
  private byte[] caPem;
  private byte[] certPem;
  private byte[] keyPem;
  private X509Certificate certificate;
  /** The problem of the last reload, or null; logged once while it stays the same. */
  private String problem;
  private Scheduler.Cancellable next;
  private boolean closed;

  private ReloadingTlsCredentials(TlsConfig config, Scheduler scheduler) {
    this.config = Objects.requireNonNull(config, "config");
    this.scheduler = scheduler;
    TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
    if (config.caCertificateFile() != null) {
      try {
        trust = AdvancedTlsX509TrustManager.newBuilder()
            .setVerification(AdvancedTlsX509TrustManager.Verification
                .CERTIFICATE_AND_HOST_NAME_VERIFICATION)
            .build();
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("no X.509 trust manager in this JVM", e);
      }
      b.trustManager(trust);
    } else {
      trust = null; // gRFC A65: without ca_certificate_file, the system's trust roots
    }
    if (config.mutual()) {
      identity = new AdvancedTlsX509KeyManager();
      b.keyManager(identity);
    } else {
      identity = null;
    }
    credentials = b.build();
  }

  /**
   * Reads the files now, failing on the first problem, and with a {@code scheduler} again every
   * refresh interval (null: never again).
   */
  public static ReloadingTlsCredentials open(TlsConfig config, Scheduler scheduler)
      throws TlsFileException {
    ReloadingTlsCredentials c = new ReloadingTlsCredentials(config, scheduler);
    try {
      c.load();
    } catch (TlsFileException e) {
      c.close();
      throw e;
    }
    c.scheduleNext();
    return c;
  }

  /**
   * Like {@link #open}, but a file that cannot be used now is logged and retried at every refresh:
   * until it can, handshakes fail (no trust roots) or present no client certificate. For a
   * long-lived client whose files may appear later.
   */
  public static ReloadingTlsCredentials start(TlsConfig config, Scheduler scheduler) {
    ReloadingTlsCredentials c = new ReloadingTlsCredentials(config, scheduler);
    c.reload();
    c.scheduleNext();
    return c;
  }

  public ChannelCredentials channelCredentials() {
    return credentials;
  }

  public TlsConfig config() {
    return config;
  }

  /** The client certificate in use (the chain's leaf); null without one. */
  public synchronized X509Certificate certificate() {
    return certificate;
  }

  /** Why the last reload applied nothing new, or null when it went well. */
  public synchronized String problem() {
    return problem;
  }

  /**
   * Re-reads the files now and applies what changed and is valid; a problem is logged (once while
   * it stays the same) and the previous material stays. Returns whether anything was applied.
   */
  public synchronized boolean reload() {
    try {
      boolean changed = load();
      if (problem != null) {
        LOG.info("TLS files usable again: " + describe());
      } else if (changed) {
        LOG.info("TLS files reloaded: " + describe());
      }
      problem = null;
      return changed;
    } catch (TlsFileException e) {
      String p = e.getMessage();
      if (!p.equals(problem)) {
        LOG.warn("TLS: " + p + "; "
            + (caPem == null && certPem == null ? "nothing to use yet"
                : "keeping the previous certificates and key"));
      }
      problem = p;
      return false;
    }
  }

  /** Reads every file; applies the ones that changed. All or nothing per trust and identity. */
  private synchronized boolean load() throws TlsFileException {
    boolean changed = false;
    if (trust != null) {
      byte[] ca = TlsMaterial.read(TlsConfig.Role.CA_CERTIFICATE, config.caCertificateFile());
      if (!Arrays.equals(ca, caPem)) {
        X509Certificate[] roots = TlsMaterial.certificates(TlsConfig.Role.CA_CERTIFICATE,
            config.caCertificateFile(), ca);
        try {
          trust.updateTrustCredentials(roots);
        } catch (IOException | GeneralSecurityException e) {
          throw new TlsFileException(TlsConfig.Role.CA_CERTIFICATE, config.caCertificateFile(),
              "cannot be used as trust roots (" + e.getMessage() + ")", e);
        }
        caPem = ca;
        changed = true;
      }
    }
    if (identity != null) {
      byte[] cert = TlsMaterial.read(TlsConfig.Role.CERTIFICATE, config.certificateFile());
      byte[] key = TlsMaterial.read(TlsConfig.Role.PRIVATE_KEY, config.privateKeyFile());
      if (!Arrays.equals(cert, certPem) || !Arrays.equals(key, keyPem)) {
        TlsMaterial.Identity id = TlsMaterial.identity(config.certificateFile(), cert,
            config.privateKeyFile(), key);
        identity.updateIdentityCredentials(id.chain(), id.key());
        certPem = cert;
        keyPem = key;
        certificate = id.chain()[0];
        changed = true;
      }
    }
    return changed;
  }

  private String describe() {
    StringBuilder sb = new StringBuilder();
    if (config.caCertificateFile() != null) {
      sb.append("trust roots from ").append(config.caCertificateFile());
    }
    if (certificate != null) {
      sb.append(sb.length() == 0 ? "" : ", ").append("client certificate ")
          .append(certificate.getSubjectX500Principal().getName()).append(" (expires ")
          .append(certificate.getNotAfter().toInstant()).append(") from ")
          .append(config.certificateFile());
    }
    return sb.toString();
  }

  private synchronized void scheduleNext() {
    if (scheduler == null || closed || (trust == null && identity == null)) {
      return;
    }
    next = scheduler.schedule(() -> {
      reload();
      scheduleNext();
    }, config.refreshInterval());
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (next != null) {
      next.cancel();
    }
  }
}
