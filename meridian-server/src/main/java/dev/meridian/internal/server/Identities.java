package dev.meridian.internal.server;

import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * A stream's identity (issue 20): its verified client certificate's URI SAN (a SPIFFE ID such as
 * {@code spiffe://example.org/ns/payments/sa/api}), else its first DNS SAN; none without a
 * certificate or without such a SAN. The TLS handshake has verified the certificate by then.
 */
final class Identities {
  private static final int DNS = 2;
  private static final int URI = 6;

  private Identities() {}

  /** The identity of the session's peer, or null. */
  static String of(SSLSession session) {
    if (session == null) {
      return null;
    }
    try {
      Certificate[] chain = session.getPeerCertificates();
      return chain.length > 0 && chain[0] instanceof X509Certificate leaf ? of(leaf) : null;
    } catch (SSLPeerUnverifiedException e) {
      return null; // TLS without a client certificate
    }
  }

  /** The identity a certificate carries, or null. */
  static String of(X509Certificate cert) {
    try {
      Collection<List<?>> sans = cert.getSubjectAlternativeNames();
      if (sans == null) {
        return null;
      }
      String dns = null;
      for (List<?> san : sans) {
        int type = (Integer) san.get(0);
        if (type == URI) {
          return (String) san.get(1);
        }
        if (type == DNS && dns == null) {
          dns = (String) san.get(1);
        }
      }
      return dns;
    } catch (CertificateParsingException e) {
      return null;
    }
  }
}
