package dev.meridian.client;

import io.grpc.Status;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.util.Locale;

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
    }
    return null;
  }
}
