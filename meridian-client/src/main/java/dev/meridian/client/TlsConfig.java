package dev.meridian.client;

import java.nio.file.Path;
import java.time.Duration;

/**
 * gRFC A65 {@code tls} channel credentials: the server's certificate is verified against
 * {@code caCertificateFile} (null: the system's trust roots); with {@code certificateFile} and
 * {@code privateKeyFile} (both or neither) the client presents that certificate (mTLS). The files
 * are PEM (certificates; a PKCS#8 {@code BEGIN PRIVATE KEY}) and are re-read every
 * {@code refreshInterval} (A65: 10 minutes unless set), so they can be rotated in place
 * ({@link ReloadingTlsCredentials}).
 */
public record TlsConfig(Path caCertificateFile, Path certificateFile, Path privateKeyFile,
    Duration refreshInterval) {
  /** gRFC A65: "If unset, defaults to 10 minutes." */
  public static final Duration DEFAULT_REFRESH_INTERVAL = Duration.ofMinutes(10);

  /** The files of a TLS config, by their gRFC A65 field names. */
  public enum Role {
    CA_CERTIFICATE("ca_certificate_file"),
    CERTIFICATE("certificate_file"),
    PRIVATE_KEY("private_key_file");

    private final String field;

    Role(String field) {
      this.field = field;
    }

    /** The bootstrap field that names this file, e.g. {@code certificate_file}. */
    public String field() {
      return field;
    }
  }

  public TlsConfig {
    if ((certificateFile == null) != (privateKeyFile == null)) {
      // gRFC A65: "If either of these fields are set, both must be set."
      throw new IllegalArgumentException(
          "certificate_file and private_key_file go together: set both or neither");
    }
    if (refreshInterval == null) {
      refreshInterval = DEFAULT_REFRESH_INTERVAL;
    }
    if (refreshInterval.isNegative() || refreshInterval.isZero()) {
      throw new IllegalArgumentException("refresh_interval must be positive, not " + refreshInterval);
    }
  }

  /** With the default refresh interval. */
  public TlsConfig(Path caCertificateFile, Path certificateFile, Path privateKeyFile) {
    this(caCertificateFile, certificateFile, privateKeyFile, null);
  }

  /** TLS with the system's trust roots and no client certificate ({@code {"type": "tls"}}). */
  public static TlsConfig systemRoots() {
    return new TlsConfig(null, null, null, null);
  }

  /** The client presents a certificate (mTLS). */
  public boolean mutual() {
    return certificateFile != null;
  }

  /** The file of {@code role}; null when not set. */
  public Path file(Role role) {
    return switch (role) {
      case CA_CERTIFICATE -> caCertificateFile;
      case CERTIFICATE -> certificateFile;
      case PRIVATE_KEY -> privateKeyFile;
    };
  }

  /**
   * Reads every file once and checks it: certificates parse, the key parses and belongs to the
   * certificate. Throws naming the file at fault.
   */
  public void check() throws TlsFileException {
    if (caCertificateFile != null) {
      TlsMaterial.trustRoots(caCertificateFile);
    }
    if (certificateFile != null) {
      TlsMaterial.identity(certificateFile, privateKeyFile);
    }
  }
}
