package dev.meridian.internal.server;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.UnresolvedAddressException;
import java.util.List;
import java.util.Locale;

/**
 * The ports {@code meridian serve} listens on, each with the flags that set it, so that a port it
 * cannot have is named by them. They are tried before the config is loaded: a busy port then
 * fails the start at once, not after a load that looked like success.
 */
final class Listening {
  private Listening() {}

  /** One port: its flag and value, and the flag and value of the address it binds. */
  record Port(String portFlag, int port, String bindFlag, String host) {
    String where() {
      return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
  }

  /**
   * Binds each port for a moment and lets it go; throws for the first that cannot be had, or for
   * two that would take the same port. Port 0 is tried too: its address must still be this
   * machine's.
   */
  static void check(List<Port> ports) throws MeridianServer.CannotListen {
    for (int i = 0; i < ports.size(); i++) {
      Port p = ports.get(i);
      InetSocketAddress a = new InetSocketAddress(p.host(), p.port());
      if (a.isUnresolved()) {
        throw cannotListen(p, new UnknownHostException(p.host()));
      }
      for (int j = 0; j < i; j++) {
        Port q = ports.get(j);
        InetSocketAddress b = new InetSocketAddress(q.host(), q.port());
        if (p.port() != 0 && p.port() == q.port() && !b.isUnresolved()
            && overlap(a.getAddress(), b.getAddress())) {
          throw new MeridianServer.CannotListen("cannot listen on " + p.where() + " ("
              + p.portFlag() + " " + p.port() + "): " + q.portFlag() + " is " + q.port()
              + " too, on " + q.where() + "; give each port a number of its own", null);
        }
      }
    }
    for (Port p : ports) {
      try (ServerSocketChannel ch = ServerSocketChannel.open()) {
        // As the servers bind: a port left in TIME_WAIT by a previous run is free to them.
        ch.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        ch.bind(new InetSocketAddress(p.host(), p.port()));
      } catch (IOException | UnresolvedAddressException e) {
        throw cannotListen(p, e);
      }
    }
  }

  private static boolean overlap(InetAddress a, InetAddress b) {
    return a.isAnyLocalAddress() || b.isAnyLocalAddress() || a.equals(b);
  }

  /**
   * {@code e} from binding {@code p}, in words that name the port, its flag and what to do; an
   * exception that is not about binding is returned as it is.
   */
  static IOException translate(Port p, IOException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      // gRPC says "Failed to bind to address"; Netty's native transport "bind(..) failed"
      if (t instanceof SocketException || t instanceof UnknownHostException
          || t instanceof UnresolvedAddressException
          || String.valueOf(t.getMessage()).toLowerCase(Locale.ROOT).contains("bind")) {
        return cannotListen(p, e);
      }
    }
    return e;
  }

  static MeridianServer.CannotListen cannotListen(Port p, Throwable e) {
    String at = "cannot listen on " + p.where() + " (" + p.portFlag() + " " + p.port() + "): ";
    String bindAt = "cannot listen on " + p.where() + " (" + p.bindFlag() + " " + p.host() + "): ";
    String why = causes(e);
    String lower = why.toLowerCase(Locale.ROOT);
    if (has(e, UnknownHostException.class) || has(e, UnresolvedAddressException.class)) {
      return new MeridianServer.CannotListen(bindAt + "unknown host " + p.host()
          + "; give an address of this machine with " + p.bindFlag()
          + " (0.0.0.0: all of them)", e);
    }
    if (lower.contains("address already in use") || lower.contains("address in use")) {
      return new MeridianServer.CannotListen(at + "the address is already in use: another "
          + "process listens on it; stop it, or choose another port with " + p.portFlag()
          + " (0: any free port)", e);
    }
    if (lower.contains("cannot assign requested address")) {
      return new MeridianServer.CannotListen(bindAt + p.host() + " is not an address of this "
          + "machine; give one of its addresses with " + p.bindFlag() + " (0.0.0.0: all of them)",
          e);
    }
    if (lower.contains("permission denied") || lower.contains("access denied")) {
      return new MeridianServer.CannotListen(at + "permission denied" + (p.port() < 1024
          ? ": a port below 1024 needs privileges (CAP_NET_BIND_SERVICE); choose one from 1024 up "
              + "with " + p.portFlag()
          : "; choose another port with " + p.portFlag()), e);
    }
    return new MeridianServer.CannotListen(at + why, e);
  }

  private static boolean has(Throwable e, Class<? extends Throwable> type) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The innermost message of a bind failure (gRPC's outer one is "Failed to bind to address",
   * its cause says why), or the class name where there is none.
   */
  private static String causes(Throwable e) {
    String why = null;
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t.getMessage() != null) {
        why = t.getMessage();
      }
      if (t instanceof BindException) {
        break;
      }
    }
    return why != null ? why : e.getClass().getSimpleName();
  }
}
