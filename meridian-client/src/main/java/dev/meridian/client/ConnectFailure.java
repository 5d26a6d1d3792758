package dev.meridian.client;

import io.grpc.Status;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.Locale;
import java.util.regex.Pattern;
import javax.net.ssl.SSLException;

/**
 * Says why a connection to a server failed, in words: gRPC reports every such failure as
 * {@code UNAVAILABLE io exception} and keeps what happened in the status's cause (issue 18).
 */
public final class ConnectFailure {
  private ConnectFailure() {}

  /**
   * E.g. {@code connection refused to 127.0.0.1:1}; null when the status does not come from a
   * failed connection (a stream the server ended, a deadline, ...).
   */
  public static String describe(Status status, String target) {
    String tls = tlsFailure(status.getCause(), target);
    if (tls != null) {
      return "TLS handshake with " + target + " failed: " + tls;
    }
    for (Throwable t = status.getCause(); t != null; t = t.getCause()) {
      if (t instanceof UnknownHostException) {
        return "unknown host in " + target;
      }
      if (t instanceof NoRouteToHostException) {
        return "no route to host " + target;
      }
      if (t instanceof ConnectException) {
        // Netty's subclasses (AnnotatedConnectException, ConnectTimeoutException) say it in the message.
        String m = String.valueOf(t.getMessage()).toLowerCase(Locale.ROOT);
        if (m.contains("refused")) {
          return "connection refused to " + target;
        }
        if (m.contains("timed out")) {
          return "connection to " + target + " timed out";
        }
        return "cannot connect to " + target + ": " + t.getMessage();
      }
      if (t instanceof IOException
          && String.valueOf(t.getMessage()).toLowerCase(Locale.ROOT).contains("connection reset")) {
        return "connection to " + target + " reset by the server";
      }
    }
    return null;
  }

  /**
   * Why a TLS handshake failed, from this client's checks of the server's certificate or from the
   * alert the server sent about ours (issue 20); null when the failure is not TLS's. The alert
   * names are matched in lower case: the JDK says {@code certificate_required}, BoringSSL
   * (grpc-netty-shaded's) {@code TLSV1_ALERT_CERTIFICATE_REQUIRED}.
   */
  private static String tlsFailure(Throwable cause, String target) {
    // This client's verdict on the server's certificate first: an outer exception may name the
    // alert this client sent about it.
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof CertificateExpiredException) {
        return "the server's certificate has expired";
      }
      if (t instanceof CertificateNotYetValidException) {
        return "the server's certificate is not valid yet";
      }
      if (t instanceof CertPathBuilderException) {
        return "the server's certificate is not issued by a CA this client trusts";
      }
      if (t instanceof CertificateException
          && NAME_MISMATCH.matcher(String.valueOf(t.getMessage())).find()) {
        return "the server's certificate does not name " + host(target);
      }
    }
    String ssl = null;
    for (Throwable t = cause; t != null; t = t.getCause()) {
      String m = String.valueOf(t.getMessage());
      String alert = m.toLowerCase(Locale.ROOT);
      if (alert.contains("certificate_required")) {
        return "the server requires a client certificate and this client has none";
      }
      if (alert.contains("certificate_expired")) {
        return "the server refused this client's certificate: it has expired";
      }
      if (alert.contains("unknown_ca") || alert.contains("bad_certificate")
          || alert.contains("certificate_unknown") || alert.contains("unsupported_certificate")) {
        return "the server refused this client's certificate (not issued by a CA it trusts, "
            + "or not for a client)";
      }
      if (alert.contains("internal_error")) {
        // What a grpc-java (BoringSSL) server sends when its trust manager refuses our certificate.
        return "the server aborted the handshake (alert internal_error; grpc-java servers send it "
            + "when they refuse the client's certificate)";
      }
      if (t.getClass().getSimpleName().equals("NotSslRecordException")) {
        return "the server does not speak TLS on that port";
      }
      if (ssl == null && t instanceof SSLException) {
        ssl = m;
      }
    }
    return ssl;
  }

  /** The JDK's words when no SAN of the certificate matches the host or IP address. */
  private static final Pattern NAME_MISMATCH = Pattern.compile(
      "No (subject alternative (DNS )?names?|name) matching");

  /** The host of a target such as {@code 127.0.0.1:18000}, {@code dns:///h:1} or {@code [::1]:1}. */
  static String host(String target) {
    String t = target.replaceFirst("^[A-Za-z][A-Za-z0-9+.-]*://[^/]*/", "");
    if (t.startsWith("[")) {
      int close = t.indexOf(']');
      return close > 0 ? t.substring(1, close) : t;
    }
    int colon = t.lastIndexOf(':');
    return colon > 0 ? t.substring(0, colon) : t;
  }
}
