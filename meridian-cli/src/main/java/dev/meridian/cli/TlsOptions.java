package dev.meridian.cli;

import dev.meridian.client.ReloadingTlsCredentials;
import dev.meridian.client.TlsConfig;
import dev.meridian.client.TlsFileException;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code --tls-ca FILE --tls-cert FILE --tls-key FILE}: TLS, and with a client certificate mTLS,
 * to the server (issue 20). Shared by get, watch, resolve, status and the bootstraps; the same
 * meaning as gRFC A65's {@code ca_certificate_file}, {@code certificate_file} and
 * {@code private_key_file}.
 */
final class TlsOptions {
  @Spec(Spec.Target.MIXEE)
  CommandSpec command;

  @Option(names = "--tls-ca", paramLabel = "FILE",
      description = "Use TLS and verify the server's certificate against the CA certificates in "
          + "FILE (PEM). Without it, --tls-cert uses the system's trust roots (not for Envoy: "
          + "bootstrap envoy needs it).")
  Path ca;

  @Option(names = "--tls-cert", paramLabel = "FILE",
      description = "Use mTLS: present the client certificate (PEM, leaf first) in FILE; needs "
          + "--tls-key.")
  Path cert;

  @Option(names = "--tls-key", paramLabel = "FILE",
      description = "The private key of --tls-cert (PEM, PKCS#8: BEGIN PRIVATE KEY).")
  Path key;

  /**
   * What the flags ask for: null without any (plaintext). Only one of {@code --tls-cert} and
   * {@code --tls-key} is a usage error.
   */
  TlsConfig config() {
    if (cert != null && key == null) {
      throw usage("--tls-cert needs --tls-key (the certificate's private key)");
    }
    if (key != null && cert == null) {
      throw usage("--tls-key needs --tls-cert (the certificate of that key)");
    }
    if (ca == null && cert == null) {
      return null;
    }
    return new TlsConfig(ca, cert, key);
  }

  /** {@link #config()} with its files read and checked now: a bad file is a usage error naming it. */
  TlsConfig checkedConfig() {
    TlsConfig c = config();
    if (c != null) {
      try {
        c.check();
      } catch (TlsFileException e) {
        throw usage(e);
      }
    }
    return c;
  }

  /** Credentials for one connection (files read once); null without TLS flags. */
  ReloadingTlsCredentials open() {
    TlsConfig c = config();
    if (c == null) {
      return null;
    }
    try {
      return ReloadingTlsCredentials.open(c, null);
    } catch (TlsFileException e) {
      throw usage(e);
    }
  }

  /** The config with absolute paths, for a bootstrap another process reads; null without flags. */
  TlsConfig absoluteConfig() {
    TlsConfig c = config();
    return c == null ? null : new TlsConfig(absolute(c.caCertificateFile()),
        absolute(c.certificateFile()), absolute(c.privateKeyFile()));
  }

  private static Path absolute(Path p) {
    return p == null ? null : p.toAbsolutePath().normalize();
  }

  /**
   * A failure to get any answer, with a hint when it looks like plaintext spoken to a TLS port:
   * the server then resets or closes the connection without a word (gRPC: "Network closed for
   * unknown reason").
   */
  String explain(String failure) {
    if (ca == null && cert == null && (failure.contains("Network closed for unknown reason")
        || failure.contains("reset by the server"))) {
      return failure + " (a TLS port? then give --tls-ca, and --tls-cert/--tls-key for mTLS)";
    }
    return failure;
  }

  static String flag(TlsConfig.Role role) {
    return switch (role) {
      case CA_CERTIFICATE -> "--tls-ca";
      case CERTIFICATE -> "--tls-cert";
      case PRIVATE_KEY -> "--tls-key";
    };
  }

  private CommandLine.ParameterException usage(TlsFileException e) {
    return usage(flag(e.role()) + ": " + e.getMessage());
  }

  CommandLine.ParameterException usage(String message) {
    return new CommandLine.ParameterException(command.commandLine(), message);
  }
}
