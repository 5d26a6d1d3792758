package dev.meridian.internal.server;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Who the admin port answers: a browser page of another site must not be able to use it.
 *
 * <p>A page can make the browser send requests to a loopback admin port: with DNS rebinding (its
 * own name re-resolved to 127.0.0.1) it even reads the answers, since the browser thinks they are
 * the page's own origin. What gives it away is the {@code Host} header, which names the
 * attacker's host: a request naming a host this port does not answer to is refused {@code 421}.
 * Allowed hosts, any port: {@code localhost} and loopback addresses, the bound address, the names
 * and addresses of {@code --admin-allowed-hosts}, and when bound to a wildcard address every
 * address of the machine's interfaces (the kubelet's probes and Prometheus name the pod's IP). A
 * request without {@code Host} (HTTP/1.0) is no browser's, and passes.
 *
 * <p>A page of another origin can also send a form POST without reading the answer (CSRF): a
 * request that changes something (any method but GET, HEAD, OPTIONS) whose {@code Origin} is not
 * this port's own, or whose {@code Sec-Fetch-Site} says another site sent it, is refused
 * {@code 403}. Clients such as curl send neither header and pass.
 */
final class AdminAccess extends Filter {
  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
  private static final Pattern IPV6 = Pattern.compile("[0-9a-f:.]*:[0-9a-f:.]*(%[0-9a-z._-]+)?");
  private static final Pattern NAME = Pattern.compile("[0-9a-z_]([0-9a-z_.-]*[0-9a-z_-])?");

  private final InetSocketAddress bound;
  private final boolean anyHost;
  /** Allowed names, lower case, without a trailing dot. */
  private final Set<String> names = new TreeSet<>();
  /** Allowed addresses: the bound one (unless a wildcard) and the listed ones. */
  private final Set<InetAddress> addresses = new LinkedHashSet<>();

  /**
   * @param bound the address the port is bound to
   * @param allowedHosts more names and addresses it answers to ({@code --admin-allowed-hosts});
   *     {@code *}: any host
   * @throws IllegalArgumentException for an entry that is not a host name or an IP address
   */
  AdminAccess(InetSocketAddress bound, Collection<String> allowedHosts) {
    this.bound = bound;
    boolean any = false;
    for (String entry : allowedHosts) {
      String host = checkAllowedHost(entry);
      if (host.equals("*")) {
        any = true;
        continue;
      }
      InetAddress ip = literal(host);
      if (ip != null) {
        addresses.add(ip);
      } else {
        names.add(host);
      }
    }
    this.anyHost = any;
    if (!bound.getAddress().isAnyLocalAddress()) {
      addresses.add(bound.getAddress());
    }
  }

  /**
   * One {@code --admin-allowed-hosts} entry, normalized: a host name or an IP address (an IPv6
   * address with or without brackets), without a port; or {@code *}.
   *
   * @throws IllegalArgumentException saying what is wrong with it
   */
  static String checkAllowedHost(String entry) {
    String e = entry == null ? "" : entry.strip().toLowerCase(Locale.ROOT);
    if (e.equals("*")) {
      return e;
    }
    if (e.startsWith("[") && e.endsWith("]")) {
      e = e.substring(1, e.length() - 1);
    }
    if (e.endsWith(".")) {
      e = e.substring(0, e.length() - 1);
    }
    if (e.contains(":") ? literal(e) == null : !NAME.matcher(e).matches()) {
      throw new IllegalArgumentException("admin allowed host '" + entry + "' is not a host name "
          + "or IP address (write it without a port: any port is allowed), or * for any host");
    }
    return e;
  }

  @Override
  public void doFilter(HttpExchange ex, Chain chain) throws IOException {
    List<String> hosts = ex.getRequestHeaders().get("Host");
    String host = hosts == null || hosts.isEmpty() ? null : hosts.get(0);
    if (hosts != null && hosts.size() > 1) {
      AdminHttpServer.send(ex, 400, "bad request: more than one Host header\n");
      return;
    }
    if (host != null && !allowsHost(host)) {
      AdminHttpServer.send(ex, 421, "misdirected request: this admin port does not answer to "
          + "host '" + host + "'; it answers to localhost and loopback addresses, the address "
          + "it is bound to" + (bound.getAddress().isAnyLocalAddress()
              ? " (a wildcard: every address of this machine)" : "")
          + ", and the hosts of --admin-allowed-hosts\n");
      return;
    }
    String method = ex.getRequestMethod();
    if (!method.equals("GET") && !method.equals("HEAD") && !method.equals("OPTIONS")) {
      String site = ex.getRequestHeaders().getFirst("Sec-Fetch-Site");
      if (site != null && (site.equalsIgnoreCase("cross-site")
          || site.equalsIgnoreCase("same-site"))) {
        AdminHttpServer.send(ex, 403, "forbidden: a " + method + " sent by a page of another "
            + "site (Sec-Fetch-Site: " + site + ")\n");
        return;
      }
      String origin = ex.getRequestHeaders().getFirst("Origin");
      if (origin != null && !sameOrigin(origin, host)) {
        AdminHttpServer.send(ex, 403, "forbidden: a " + method + " from origin '" + origin
            + "', not this admin port's own\n");
        return;
      }
    }
    chain.doFilter(ex);
  }

  @Override
  public String description() {
    return "admin Host, Origin and Sec-Fetch-Site checks";
  }

  /** Whether a request with this {@code Host} header is one this port answers. */
  boolean allowsHost(String header) {
    if (anyHost) {
      return true;
    }
    String host = hostOf(header);
    if (host == null) {
      return false;
    }
    if (host.equals("localhost") || names.contains(host)) {
      return true;
    }
    InetAddress ip = literal(host);
    if (ip == null) {
      return false; // a name not listed: what DNS rebinding sends
    }
    return ip.isLoopbackAddress() || addresses.contains(ip)
        || bound.getAddress().isAnyLocalAddress() && isInterfaceAddress(ip);
  }

  /**
   * The host of a {@code Host} header, lower case, without port, brackets or trailing dot; null
   * when malformed.
   */
  static String hostOf(String header) {
    String h = header.strip().toLowerCase(Locale.ROOT);
    String port;
    if (h.startsWith("[")) {
      int end = h.indexOf(']');
      if (end < 0) {
        return null;
      }
      port = h.substring(end + 1);
      h = h.substring(1, end);
      if (!port.isEmpty() && !port.startsWith(":")) {
        return null;
      }
      port = port.isEmpty() ? "" : port.substring(1);
    } else {
      int colon = h.indexOf(':');
      if (colon >= 0 && h.indexOf(':', colon + 1) >= 0) {
        return null; // an IPv6 address without brackets is no Host
      }
      port = colon < 0 ? "" : h.substring(colon + 1);
      h = colon < 0 ? h : h.substring(0, colon);
    }
    if (!port.chars().allMatch(Character::isDigit) || port.length() > 5) {
      return null;
    }
    if (h.endsWith(".")) {
      h = h.substring(0, h.length() - 1);
    }
    return h.isEmpty() ? null : h;
  }

  /** {@code host} as an address when it is an IP literal; never a DNS lookup. */
  static InetAddress literal(String host) {
    try {
      if (IPV4.matcher(host).matches()) {
        String[] parts = host.split("\\.");
        byte[] b = new byte[4];
        for (int i = 0; i < 4; i++) {
          int v = Integer.parseInt(parts[i]);
          if (v > 255) {
            return null;
          }
          b[i] = (byte) v;
        }
        return InetAddress.getByAddress(b);
      }
      if (IPV6.matcher(host).matches()) {
        // With a colon the JDK parses an IPv6 literal and throws if it is none: no lookup.
        InetAddress a = InetAddress.getByName(host);
        return a instanceof Inet6Address || host.startsWith("::ffff:") ? a : null;
      }
    } catch (UnknownHostException e) {
      return null;
    }
    return null;
  }

  /** One of this machine's addresses (read each time: interfaces come and go). */
  private static boolean isInterfaceAddress(InetAddress ip) {
    try {
      return NetworkInterface.getByInetAddress(ip) != null;
    } catch (SocketException e) {
      return false;
    }
  }

  /** Whether {@code origin} is {@code http://} and the host and port of the Host header. */
  private static boolean sameOrigin(String origin, String hostHeader) {
    if (hostHeader == null) {
      return false;
    }
    URI o;
    URI own;
    try {
      o = new URI(origin.strip());
      own = new URI("http://" + hostHeader.strip());
    } catch (java.net.URISyntaxException e) {
      return false; // "null" included: a sandboxed or opaque origin is never this port's
    }
    return "http".equalsIgnoreCase(o.getScheme()) && o.getHost() != null
        && own.getHost() != null && o.getHost().equalsIgnoreCase(own.getHost())
        && port(o) == port(own) && (o.getPath() == null || o.getPath().isEmpty());
  }

  private static int port(URI u) {
    return u.getPort() < 0 ? 80 : u.getPort();
  }
}
