package dev.meridian.client;

import java.nio.file.Path;

/** A TLS file that cannot be used: missing, unreadable, not PEM, or a key of another certificate. */
public final class TlsFileException extends Exception {
  private final TlsConfig.Role role;
  private final Path file;

  TlsFileException(TlsConfig.Role role, Path file, String problem, Throwable cause) {
    super(file + ": " + problem, cause);
    this.role = role;
    this.file = file;
  }

  /** Which file of the config: the CA certificates, the client certificate or its key. */
  public TlsConfig.Role role() {
    return role;
  }

  public Path file() {
    return file;
  }
}
