package dev.meridian.internal.server;

import dev.meridian.internal.protocol.ClientText;
import dev.meridian.internal.protocol.LogLine;
import java.net.SocketAddress;
import java.nio.channels.ClosedChannelException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;

/**
 * Logs a TLS handshake on the xDS port that failed ({@code tls_handshake_failed}), saying in words
 * why, from the server's side: the client's certificate refused, none sent, this server's refused
 * by the client, plaintext on the TLS port. At most one line per peer address a minute (a client
 * retries with backoff, each time failing the same way), every one counted
 * ({@code meridian_tls_handshake_failures_total}). A connection closed or timed out before any
 * TLS error (a TCP health check, a port scan) is neither.
 */
final class HandshakeFailures {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger("dev.meridian.server");
  private final LogGate perPeer;
  private final Metrics metrics;

  HandshakeFailures(Clock clock, Metrics metrics) {
    this.perPeer = new LogGate(clock, Duration.ofMinutes(1));
    this.metrics = metrics;
  }

  /** The handshake of the connection from {@code remote} failed with {@code cause}. */
  void failed(SocketAddress remote, Throwable cause) {
    if (beforeAnyTlsError(cause)) {
      return;
    }
    metrics.tlsHandshakeFailed();
    if (perPeer.open(PeerAddress.host(remote))) {
      LOG.warn(LogLine.of("tls_handshake_failed").kv("peer", PeerAddress.format(remote))
          .kv("reason", reason(cause)).kv("detail", ClientText.clip(detail(cause))).toString());
    }
  }

  private static boolean beforeAnyTlsError(Throwable cause) {
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof ClosedChannelException
          || t.getClass().getSimpleName().equals("SslHandshakeTimeoutException")) {
        return true;
      }
    }
    return cause == null;
  }

  /** Why, in words; the library's own words are the {@code detail}. */
  static String reason(Throwable cause) {
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof CertificateExpiredException) {
        return "the client's certificate has expired";
      }
      if (t instanceof CertificateNotYetValidException) {
        return "the client's certificate is not valid yet";
      }
      if (t instanceof CertPathValidatorException || t instanceof CertPathBuilderException) {
        return "the client's certificate is not issued by a CA of --tls-client-ca";
      }
      if (t.getClass().getSimpleName().equals("NotSslRecordException")) {
        return "not TLS: the client spoke plaintext to this TLS port (a client without TLS, or "
            + "one pointed at the wrong port)";
      }
    }
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof CertificateException) {
        return "the client's certificate was refused: " + t.getMessage();
      }
    }
    StringBuilder all = new StringBuilder();
    for (Throwable t = cause; t != null; t = t.getCause()) {
      all.append(t.getMessage()).append('\n');
    }
    String m = all.toString().toLowerCase(Locale.ROOT);
    if (m.contains("peer_did_not_return_a_certificate") || m.contains("certificate_required")
        || m.contains("empty client certificate chain") || m.contains("null cert chain")) {
      return "the client sent no certificate; this server requires one (--tls-client-ca)";
    }
    if (m.contains("certificate_unknown") || m.contains("bad_certificate")
        || m.contains("unknown_ca") || m.contains("certificate_expired")
        || m.contains("unsupported_certificate") || m.contains("access_denied")) {
      return "the client refused this server's certificate (--tls-cert): it does not trust its "
          + "issuer, or the name it connected to is not in it";
    }
    if (m.contains("wrong_version_number") || m.contains("unsupported_protocol")
        || m.contains("protocol_version") || m.contains("no_shared_cipher")
        || m.contains("no cipher suites in common") || m.contains("no_cipher")
        || m.contains("handshake_failure")) {
      return "no TLS version or cipher suite in common with the client";
    }
    return "the TLS handshake failed";
  }

  /** The innermost message, with its exception's name when it has none. */
  private static String detail(Throwable cause) {
    String detail = null;
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t.getMessage() != null) {
        detail = t.getMessage();
      } else if (detail == null) {
        detail = t.getClass().getSimpleName();
      }
    }
    return detail == null ? "" : detail;
  }
}
