package dev.meridian.internal.server;

import dev.meridian.internal.protocol.Identity;
import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * A stream's identity, from its verified client certificate (the TLS handshake has verified it by
 * then). Typed ({@link Identity}): the URI SAN when there is one (a SPIFFE ID such as {@code
 * spiffe://example.org/ns/payments/sa/api}), which must be {@code scheme://...}; without a URI
 * SAN, the first DNS SAN, which must be a host name (a wildcard {@code *.example.org} is not). A
 * certificate with more than one URI SAN is refused: a SPIFFE X.509-SVID has exactly one, and
 * choosing one of several would let whoever asked for the certificate choose who it is.
 */
final class Identities {
  private static final int DNS = 2;
  private static final int URI = 6;

  private Identities() {}

  /**
   * What a certificate proves: {@code identity} (null: none), or {@code refusal} (non-null: the
   * certificate may open no stream, and why).
   */
  record Proof(String identity, String refusal) {
    static final Proof NONE = new Proof(null, null);
  }

  /** What the session's peer proves; none without TLS or without a client certificate. */
  static Proof of(SSLSession session) {
    if (session == null) {
      return Proof.NONE;
    }
    try {
      Certificate[] chain = session.getPeerCertificates();
      return chain.length > 0 && chain[0] instanceof X509Certificate leaf ? of(leaf) : Proof.NONE;
    } catch (SSLPeerUnverifiedException e) {
      return Proof.NONE; // TLS without a client certificate
    }
  }

  /** What a certificate proves. */
  static Proof of(X509Certificate cert) {
    Collection<List<?>> sans;
    try {
      sans = cert.getSubjectAlternativeNames();
    } catch (CertificateParsingException e) {
      return new Proof(null, "the client certificate's subject alternative names do not parse: "
          + e.getMessage());
    }
    if (sans == null) {
      return Proof.NONE;
    }
    List<String> uris = new ArrayList<>();
    String dns = null;
    for (List<?> san : sans) {
      int type = (Integer) san.get(0);
      if (type == URI) {
        uris.add((String) san.get(1));
      } else if (type == DNS && dns == null) {
        dns = (String) san.get(1);
      }
    }
    if (uris.size() > 1) {
      return new Proof(null, "the client certificate has " + uris.size() + " URI SANs " + uris
          + "; an identity certificate (SPIFFE X.509-SVID) has exactly one");
    }
    if (uris.size() == 1) {
      // The URI SAN is the identity: a DNS SAN beside it is never taken in its stead.
      return Identity.isUri(uris.get(0)) ? new Proof(uris.get(0), null) : Proof.NONE;
    }
    return Identity.isHostName(dns) ? new Proof(dns, null) : Proof.NONE;
  }
}
