package dev.meridian.testing;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptor;
import io.grpc.TlsServerCredentials;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;

/**
 * The server side of the client's TLS tests: gRPC server credentials made from {@link TestCerts}
 * files, and a record of which client certificate each call came with.
 */
public final class TlsServers {
  private TlsServers() {}

  /**
   * TLS with the certificate and key in {@code server}; with a {@code clientCa}, clients must
   * present a certificate it issued (mTLS), without one they present none.
   */
  public static ServerCredentials credentials(TestCerts.Written server, Path clientCa) {
    try {
      TlsServerCredentials.Builder b = TlsServerCredentials.newBuilder()
          .keyManager(server.cert().toFile(), server.key().toFile());
      if (clientCa != null) {
        b.trustManager(clientCa.toFile()).clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
      }
      return b.build();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Records, for every call, the client's certificate: its first URI SAN (a SPIFFE ID), else its
   * subject; {@code "none"} for a call without one.
   */
  public static final class Peers implements ServerInterceptor {
    private final List<String> identities = new CopyOnWriteArrayList<>();

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
        ServerCallHandler<Q, R> next) {
      identities.add(identity(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION)));
      return next.startCall(call, headers);
    }

    /** Every call's client identity, oldest first. */
    public List<String> identities() {
      return new ArrayList<>(identities);
    }

    /** The identity of the latest call; null before the first. */
    public String last() {
      List<String> all = identities();
      return all.isEmpty() ? null : all.get(all.size() - 1);
    }

    private static String identity(SSLSession session) {
      if (session == null) {
        return "none";
      }
      Certificate[] chain;
      try {
        chain = session.getPeerCertificates();
      } catch (SSLPeerUnverifiedException e) {
        return "none";
      }
      X509Certificate leaf = (X509Certificate) chain[0];
      try {
        Collection<List<?>> sans = leaf.getSubjectAlternativeNames();
        if (sans != null) {
          for (List<?> san : sans) {
            if (Integer.valueOf(6).equals(san.get(0))) { // uniformResourceIdentifier
              return (String) san.get(1);
            }
          }
        }
      } catch (CertificateParsingException e) {
        // fall back to the subject
      }
      return leaf.getSubjectX500Principal().getName();
    }
  }
}
