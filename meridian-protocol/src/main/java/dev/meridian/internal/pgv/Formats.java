package dev.meridian.internal.pgv;

import com.google.protobuf.ByteString;

/**
 * The well-known string formats as protoc-gen-validate's reference (Go) implementation judges
 * them: its own hostname rules, Go's address, IP and URL parsers, and a hyphenated-hex UUID.
 */
final class Formats {
  private Formats() {}

  /**
   * At most 253 bytes (one trailing dot allowed); dot-separated labels of 1 to 63 ASCII letters,
   * digits and hyphens, neither starting nor ending with a hyphen.
   */
  static boolean hostname(String host) {
    if (host.length() > 253 || utf8Length(host) > 253) {
      return false;
    }
    String s = host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
    int start = 0;
    while (true) {
      int dot = s.indexOf('.', start);
      int end = dot < 0 ? s.length() : dot;
      if (!label(s, start, end)) {
        return false;
      }
      if (dot < 0) {
        return true;
      }
      start = dot + 1;
    }
  }

  private static boolean label(String s, int start, int end) {
    int len = end - start;
    if (len == 0 || len > 63 || s.charAt(start) == '-' || s.charAt(end - 1) == '-') {
      return false;
    }
    for (int i = start; i < end; i++) {
      char c = s.charAt(i);
      boolean ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
          || c == '-';
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  static int utf8Length(String s) {
    int n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n++;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c) && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3;
      }
    }
    return n;
  }

  // ---- IP addresses, as Go's net.ParseIP reads them (no zones, no leading zeros in IPv4) ----

  /** The 16 bytes of an IPv4 or IPv6 address (IPv4 mapped into IPv6), or null. */
  static byte[] parseIp(String s) {
    if (s.indexOf(':') < 0) {
      byte[] v4 = parseIpv4(s, 0, s.length());
      return v4 == null ? null : mapped(v4);
    }
    return parseIpv6(s);
  }

  private static byte[] mapped(byte[] v4) {
    byte[] b = new byte[16];
    b[10] = (byte) 0xff;
    b[11] = (byte) 0xff;
    System.arraycopy(v4, 0, b, 12, 4);
    return b;
  }

  private static byte[] parseIpv4(String s, int from, int to) {
    byte[] b = new byte[4];
    int i = from;
    for (int part = 0; part < 4; part++) {
      if (part > 0) {
        if (i >= to || s.charAt(i) != '.') {
          return null;
        }
        i++;
      }
      int start = i;
      int n = 0;
      while (i < to && s.charAt(i) >= '0' && s.charAt(i) <= '9' && i - start < 4) {
        n = n * 10 + (s.charAt(i) - '0');
        i++;
      }
      int digits = i - start;
      if (digits == 0 || digits > 3 || n > 255 || digits > 1 && s.charAt(start) == '0') {
        return null;
      }
      b[part] = (byte) n;
    }
    return i == to ? b : null;
  }

  private static byte[] parseIpv6(String s) {
    byte[] ip = new byte[16];
    int ellipsis = -1;
    int i = 0;
    int n = s.length();
    if (n >= 2 && s.charAt(0) == ':' && s.charAt(1) == ':') {
      ellipsis = 0;
      i = 2;
      if (i == n) {
        return ip;
      }
    }
    int j = 0;
    while (j < 16) {
      int start = i;
      int v = 0;
      while (i < n && i - start < 5 && hex(s.charAt(i)) >= 0) {
        v = v * 16 + hex(s.charAt(i));
        i++;
      }
      int digits = i - start;
      if (digits == 0 || digits > 4) {
        return null;
      }
      if (i < n && s.charAt(i) == '.') {
        // an embedded IPv4 address ends the address and takes four bytes
        if (ellipsis < 0 && j != 12 || j + 4 > 16) {
          return null;
        }
        byte[] v4 = parseIpv4(s, start, n);
        if (v4 == null) {
          return null;
        }
        System.arraycopy(v4, 0, ip, j, 4);
        j += 4;
        i = n;
        break;
      }
      ip[j] = (byte) (v >> 8);
      ip[j + 1] = (byte) v;
      j += 2;
      if (i == n) {
        break;
      }
      if (s.charAt(i) != ':' || i + 1 == n) {
        return null;
      }
      i++;
      if (s.charAt(i) == ':') {
        if (ellipsis >= 0) {
          return null;
        }
        ellipsis = j;
        i++;
        if (i == n) {
          break;
        }
      }
    }
    if (i != n) {
      return null;
    }
    if (j < 16) {
      if (ellipsis < 0) {
        return null;
      }
      int shift = 16 - j;
      for (int k = j - 1; k >= ellipsis; k--) {
        ip[k + shift] = ip[k];
      }
      for (int k = ellipsis + shift - 1; k >= ellipsis; k--) {
        ip[k] = 0;
      }
    } else if (ellipsis >= 0) {
      return null; // "::" must stand for at least one group
    }
    return ip;
  }

  private static int hex(char c) {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
      return c - 'A' + 10;
    }
    return -1;
  }

  /** An IPv4 address, or IPv6 one mapping IPv4 ({@code ::ffff:a.b.c.d}): Go's To4. */
  static boolean isV4(byte[] ip16) {
    for (int i = 0; i < 10; i++) {
      if (ip16[i] != 0) {
        return false;
      }
    }
    return ip16[10] == (byte) 0xff && ip16[11] == (byte) 0xff;
  }

  static boolean ip(String s) {
    return parseIp(s) != null;
  }

  static boolean ipv4(String s) {
    byte[] ip = parseIp(s);
    return ip != null && isV4(ip);
  }

  static boolean ipv6(String s) {
    byte[] ip = parseIp(s);
    return ip != null && !isV4(ip);
  }

  /** Bytes as an IP address, as Go's net.IP reads them: 4 bytes, or 16. */
  static boolean ip(ByteString b) {
    return b.size() == 4 || b.size() == 16;
  }

  static boolean ipv4(ByteString b) {
    return b.size() == 4 || b.size() == 16 && isV4(b.toByteArray());
  }

  static boolean ipv6(ByteString b) {
    return b.size() == 16 && !isV4(b.toByteArray());
  }

  static boolean address(String s) {
    return hostname(s) || ip(s);
  }

  // ---- UUID ----

  /** 8-4-4-4-12 hexadecimal digits, either case. */
  static boolean uuid(String s) {
    if (s.length() != 36) {
      return false;
    }
    for (int i = 0; i < 36; i++) {
      char c = s.charAt(i);
      if (i == 8 || i == 13 || i == 18 || i == 23) {
        if (c != '-') {
          return false;
        }
      } else if (hex(c) < 0) {
        return false;
      }
    }
    return true;
  }

  // ---- email, as Go's net/mail.ParseAddress reads an address, then PGV's limits ----

  static boolean email(String value) {
    String addr = mailAddress(value.strip());
    if (addr == null || utf8Length(addr) > 254) {
      return false;
    }
    int at = addr.indexOf('@');
    if (at < 0 || utf8Length(addr.substring(0, at)) > 64) {
      return false;
    }
    return hostname(addr.substring(at + 1));
  }

  /** The addr-spec of {@code name <addr-spec>} or of a bare addr-spec; null when malformed. */
  private static String mailAddress(String s) {
    if (s.isEmpty()) {
      return null;
    }
    if (s.endsWith(">")) {
      int lt = angleStart(s);
      if (lt < 0 || !phrase(s.substring(0, lt).strip())) {
        return null;
      }
      return addrSpec(s.substring(lt + 1, s.length() - 1).strip());
    }
    return addrSpec(s);
  }

  /** Where {@code <} opens the address: the last one outside a quoted display name. */
  private static int angleStart(String s) {
    boolean quoted = false;
    int found = -1;
    for (int i = 0; i < s.length() - 1; i++) {
      char c = s.charAt(i);
      if (c == '\\' && quoted) {
        i++;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == '<' && !quoted) {
        found = i;
      }
    }
    return quoted ? -1 : found;
  }

  /** A display name: words of atom characters (dots allowed) or quoted strings; may be empty. */
  private static boolean phrase(String s) {
    int i = 0;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c == ' ' || c == '\t') {
        i++;
      } else if (c == '"') {
        int end = quotedEnd(s, i);
        if (end < 0) {
          return false;
        }
        i = end;
      } else if (atext(c) || c == '.') {
        i++;
      } else {
        return false;
      }
    }
    return true;
  }

  /** local@domain: a dot-atom or quoted local part, a dot-atom domain. */
  private static String addrSpec(String s) {
    int i;
    if (s.startsWith("\"")) {
      i = quotedEnd(s, 0);
      if (i < 0) {
        return null;
      }
    } else {
      i = dotAtomEnd(s, 0);
      if (i <= 0) {
        return null;
      }
    }
    if (i >= s.length() || s.charAt(i) != '@') {
      return null;
    }
    int end = dotAtomEnd(s, i + 1);
    if (end != s.length() || end == i + 1) {
      return null;
    }
    return s;
  }

  /** The end of a dot-atom at {@code from}: atoms joined by single dots; -1 when malformed. */
  private static int dotAtomEnd(String s, int from) {
    int i = from;
    boolean needAtom = true;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (atext(c)) {
        needAtom = false;
        i++;
      } else if (c == '.' && !needAtom) {
        needAtom = true;
        i++;
      } else {
        break;
      }
    }
    return needAtom ? (i == from ? from : -1) : i;
  }

  /** The index after the closing quote of a quoted string opening at {@code from}, or -1. */
  private static int quotedEnd(String s, int from) {
    for (int i = from + 1; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\') {
        i++;
      } else if (c == '"') {
        return i + 1;
      } else if (c < 0x20 && c != '\t' || c == 0x7f) {
        return -1;
      }
    }
    return -1;
  }

  /** RFC 5322's atext; Go also lets any non-ASCII character through. */
  private static boolean atext(char c) {
    if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80) {
      return true;
    }
    return "!#$%&'*+-/=?^_`{|}~".indexOf(c) >= 0;
  }

  // ---- URIs, as Go's net/url.Parse reads them ----

  /** Parses as a URL: absolute (a scheme) when {@code absolute}, a reference otherwise. */
  static boolean uri(String raw, boolean absolute) {
    String u = raw;
    int hash = raw.indexOf('#');
    if (hash >= 0) {
      u = raw.substring(0, hash);
      if (!unescapes(raw.substring(hash + 1), false)) {
        return false;
      }
    }
    for (int i = 0; i < u.length(); i++) {
      char c = u.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        return false;
      }
    }
    if (u.equals("*")) {
      return !absolute;
    }
    String scheme = "";
    String rest = u;
    for (int i = 0; i < u.length(); i++) {
      char c = u.charAt(i);
      if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
        continue;
      }
      if (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
        if (i == 0) {
          break;
        }
        continue;
      }
      if (c == ':') {
        if (i == 0) {
          return false; // missing protocol scheme
        }
        scheme = u.substring(0, i);
        rest = u.substring(i + 1);
      }
      break;
    }
    int q = rest.indexOf('?');
    if (q >= 0) {
      rest = rest.substring(0, q);
    }
    if (!rest.startsWith("/")) {
      if (!scheme.isEmpty()) {
        return true; // opaque, as mailto:x
      }
      int slash = rest.indexOf('/');
      String segment = slash < 0 ? rest : rest.substring(0, slash);
      if (segment.indexOf(':') >= 0) {
        return false; // a first path segment with a colon reads as a broken scheme
      }
    }
    if ((!scheme.isEmpty() || !rest.startsWith("///")) && rest.startsWith("//")) {
      String authority = rest.substring(2);
      int slash = authority.indexOf('/');
      if (slash >= 0) {
        rest = authority.substring(slash);
        authority = authority.substring(0, slash);
      } else {
        rest = "";
      }
      if (!authority(authority)) {
        return false;
      }
    }
    if (!unescapes(rest, false)) {
      return false;
    }
    return !absolute || !scheme.isEmpty();
  }

  private static boolean authority(String a) {
    int at = a.lastIndexOf('@');
    String host = at < 0 ? a : a.substring(at + 1);
    if (!host(host)) {
      return false;
    }
    if (at < 0) {
      return true;
    }
    String userinfo = a.substring(0, at);
    for (int i = 0; i < userinfo.length(); i++) {
      char c = userinfo.charAt(i);
      boolean ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
          || "-._:~!$&'()*+,;=%@".indexOf(c) >= 0;
      if (!ok) {
        return false;
      }
    }
    return unescapes(userinfo, false);
  }

  private static boolean host(String host) {
    if (host.startsWith("[")) {
      int close = host.lastIndexOf(']');
      if (close < 0 || !optionalPort(host.substring(close + 1))) {
        return false;
      }
      int zone = host.substring(0, close).indexOf("%25");
      if (zone >= 0) {
        return unescapes(host.substring(0, zone), true)
            && unescapes(host.substring(zone, close), false)
            && unescapes(host.substring(close), true);
      }
    } else {
      int colon = host.lastIndexOf(':');
      if (colon >= 0 && !optionalPort(host.substring(colon))) {
        return false;
      }
    }
    return unescapes(host, true);
  }

  private static boolean optionalPort(String p) {
    if (p.isEmpty()) {
      return true;
    }
    if (p.charAt(0) != ':') {
      return false;
    }
    for (int i = 1; i < p.length(); i++) {
      if (p.charAt(i) < '0' || p.charAt(i) > '9') {
        return false;
      }
    }
    return true;
  }

  /** Every {@code %} starts two hex digits; in a host, only {@code %25} or non-ASCII escapes. */
  private static boolean unescapes(String s, boolean host) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%') {
        if (i + 2 >= s.length() || hex(s.charAt(i + 1)) < 0 || hex(s.charAt(i + 2)) < 0) {
          return false;
        }
        if (host && hex(s.charAt(i + 1)) < 8 && !s.startsWith("%25", i)) {
          return false;
        }
        i += 2;
      } else if (host && c < 0x80 && !hostChar(c)) {
        return false;
      }
    }
    return true;
  }

  private static boolean hostChar(char c) {
    return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
        || "!$&'()*+,;=:[]<>\"-_.~".indexOf(c) >= 0;
  }
}
