package dev.meridian.internal.protocol;

import java.util.Map;
import java.util.TreeMap;

/**
 * An xDS resource name in the {@code xdstp://} scheme (xDS TP1 "URI-based xDS resource names",
 * gRFC A47): {@code xdstp://[authority]/{type}/{id}[?{context parameters}][#{directives}]}. The one
 * place where such names are parsed and made canonical, for the server (matching a request to a
 * resource, glob collections, config validation) and the client (watches, authorities).
 *
 * <p>Canonical form (TP1 "Normalization": two names are equal component-wise modulo the order of
 * their context parameters): context parameters sorted by key, percent-encodings normalized as
 * RFC 3986 section 6.2.2 says (hex digits upper case, unreserved characters decoded), and the
 * processing directives ({@code #...}) dropped, since they are not part of a resource's identity.
 *
 * @param authority may be empty ({@code xdstp:///type/id})
 * @param type the resource type's full message name (the type URL without
 *     {@code type.googleapis.com/})
 * @param id the rest of the path; a glob collection's ends in {@code /*} (TP1 "Glob")
 * @param params the context parameters, sorted by key
 */
public record XdstpName(String authority, String type, String id, Map<String, String> params) {
  public static final String SCHEME = "xdstp://";
  /** What a glob collection's id ends with, or is (TP1 "Glob"). */
  private static final String GLOB = "*";

  public XdstpName {
    params = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(params));
  }

  public static boolean isXdstp(String name) {
    return name.startsWith(SCHEME);
  }

  /** Parses an xdstp name; throws IllegalArgumentException naming what is wrong. */
  public static XdstpName parse(String name) {
    if (!isXdstp(name)) {
      throw new IllegalArgumentException("not an xdstp name: " + name);
    }
    String rest = name.substring(SCHEME.length());
    int hash = rest.indexOf('#');
    if (hash >= 0) {
      rest = rest.substring(0, hash); // processing directives are not part of the identity
    }
    String query = "";
    int q = rest.indexOf('?');
    if (q >= 0) {
      query = rest.substring(q + 1);
      rest = rest.substring(0, q);
    }
    int slash = rest.indexOf('/');
    if (slash < 0) {
      throw new IllegalArgumentException("xdstp name without a resource type: " + name);
    }
    String authority = normalize(rest.substring(0, slash), name);
    String path = rest.substring(slash + 1);
    int typeEnd = path.indexOf('/');
    if (typeEnd <= 0 || typeEnd == path.length() - 1) {
      throw new IllegalArgumentException(typeEnd == 0
          ? "xdstp name without a resource type: " + name
          : "xdstp name without a resource id: " + name);
    }
    Map<String, String> params = new TreeMap<>();
    if (!query.isEmpty()) {
      for (String kv : query.split("&")) {
        if (kv.isEmpty()) {
          continue;
        }
        int eq = kv.indexOf('=');
        String key = normalize(eq < 0 ? kv : kv.substring(0, eq), name);
        String value = eq < 0 ? "" : normalize(kv.substring(eq + 1), name);
        if (params.put(key, value) != null) {
          throw new IllegalArgumentException(
              "xdstp name with context parameter '" + key + "' twice: " + name);
        }
      }
    }
    return new XdstpName(authority, normalize(path.substring(0, typeEnd), name),
        normalize(path.substring(typeEnd + 1), name), params);
  }

  /**
   * {@code name} in canonical form if it is an xdstp name; any other name (or an xdstp name that
   * does not parse, which then matches only itself) as it is. Returns the same instance when
   * nothing changes.
   */
  public static String canonicalize(String name) {
    if (!isXdstp(name)) {
      return name;
    }
    try {
      String c = parse(name).canonical();
      return c.equals(name) ? name : c;
    } catch (IllegalArgumentException e) {
      return name;
    }
  }

  /** {@code names} with every xdstp name canonical; the same list when none changes. */
  public static java.util.List<String> canonicalize(java.util.List<String> names) {
    java.util.List<String> out = null;
    for (int i = 0; i < names.size(); i++) {
      String n = names.get(i);
      String c = isXdstp(n) ? canonicalize(n) : n;
      if (c != n && out == null) {
        out = new java.util.ArrayList<>(names.subList(0, i));
      }
      if (out != null) {
        out.add(c);
      }
    }
    return out == null ? names : out;
  }

  /**
   * What is wrong with {@code name} as the name of a resource of the type {@code typeUrl} in a
   * config, or null if nothing is (every name that is not xdstp is fine here). An xdstp name must
   * parse, name its own resource type (TP1: the type segment is the type URL without {@code
   * type.googleapis.com/}), name one resource (not a glob collection) and be written in canonical
   * form, since requests are matched by that form.
   */
  public static String problemAsResourceName(String name, String typeUrl) {
    if (!isXdstp(name)) {
      return null;
    }
    XdstpName n;
    try {
      n = parse(name);
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    String type = typeUrl.substring(typeUrl.lastIndexOf('/') + 1);
    if (!n.type().equals(type)) {
      return "xdstp name " + name + " has the type segment '" + n.type()
          + "', but the resource is of type " + type + " (xDS TP1: xdstp://AUTHORITY/" + type
          + "/ID)";
    }
    if (n.isGlob()) {
      return "xdstp name " + name + " is a glob collection (it ends in /*); a resource is named"
          + " by one of its members (xDS TP1 \"Glob\")";
    }
    String canonical = n.canonical();
    if (!canonical.equals(name)) {
      return "xdstp name " + name + " is not in canonical form; write it as " + canonical
          + " (context parameters sorted, percent-encodings normalized, no #directives)";
    }
    return null;
  }

  /** The name with its context parameters sorted and percent-encodings normalized. */
  public String canonical() {
    StringBuilder sb = new StringBuilder(SCHEME).append(authority).append('/').append(type)
        .append('/').append(id);
    appendParams(sb);
    return sb.toString();
  }

  private void appendParams(StringBuilder sb) {
    char sep = '?';
    for (Map.Entry<String, String> e : params.entrySet()) {
      sb.append(sep).append(e.getKey()).append('=').append(e.getValue());
      sep = '&';
    }
  }

  /** Whether this names a glob collection: its id is {@code *} or ends in {@code /*} (TP1 "Glob"). */
  public boolean isGlob() {
    return id.equals(GLOB) || id.endsWith("/" + GLOB);
  }

  /** Whether {@code name} is an xdstp glob collection (see {@link #isGlob()}). */
  public static boolean isGlob(String name) {
    if (!isXdstp(name)) {
      return false;
    }
    int end = name.indexOf('?');
    int hash = name.indexOf('#');
    if (end < 0 || (hash >= 0 && hash < end)) {
      end = hash < 0 ? name.length() : hash;
    }
    return end > SCHEME.length() + 1 && name.charAt(end - 1) == '*' && name.charAt(end - 2) == '/'
        && name.indexOf('/', SCHEME.length()) < end - 2;
  }

  /**
   * The glob collection a resource of this name belongs to (TP1 "Glob"): the same authority, type
   * and context parameters, the last segment of its id replaced by {@code *}, in canonical form.
   * {@code xdstp://a/T/p/q/r?k=v} belongs to {@code xdstp://a/T/p/q/*?k=v} only: a collection
   * holds the resources directly under its path, and context parameters must match exactly (a
   * request for {@code .../foo/*?some=thing} matches {@code .../foo/bar?some=thing}, not
   * {@code .../foo/bar}).
   */
  public String collection() {
    int last = id.lastIndexOf('/');
    StringBuilder sb = new StringBuilder(SCHEME).append(authority).append('/').append(type)
        .append('/').append(last < 0 ? "" : id.substring(0, last + 1)).append(GLOB);
    appendParams(sb);
    return sb.toString();
  }

  /**
   * The glob collection (canonical) that a resource named {@code name} belongs to, or null if it
   * is not an xdstp name of a resource (not xdstp, a glob itself, or not parseable).
   */
  public static String collectionOf(String name) {
    if (!isXdstp(name)) {
      return null;
    }
    try {
      XdstpName n = parse(name);
      return n.isGlob() ? null : n.collection();
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** The authority of an xdstp name, or null if {@code name} is not one (or does not parse). */
  public static String authorityOf(String name) {
    if (!isXdstp(name)) {
      return null;
    }
    int slash = name.indexOf('/', SCHEME.length());
    return slash < 0 ? null : normalizeOrNull(name.substring(SCHEME.length(), slash));
  }

  private static String normalizeOrNull(String s) {
    try {
      return normalize(s, s);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /**
   * RFC 3986 section 6.2.2 normalization of one component: percent-encoded unreserved characters
   * decoded, other percent-encodings with upper-case hex digits. A {@code %} not followed by two
   * hex digits is refused: the name is not a URI.
   */
  private static String normalize(String s, String name) {
    int pct = s.indexOf('%');
    if (pct < 0) {
      return s;
    }
    StringBuilder sb = new StringBuilder(s.length()).append(s, 0, pct);
    for (int i = pct; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c != '%') {
        sb.append(c);
        continue;
      }
      int hi = i + 2 < s.length() ? Character.digit(s.charAt(i + 1), 16) : -1;
      int lo = hi >= 0 ? Character.digit(s.charAt(i + 2), 16) : -1;
      if (lo < 0) {
        throw new IllegalArgumentException("xdstp name with a '%' that is not a percent-encoding"
            + " (two hex digits): " + name);
      }
      char decoded = (char) (hi * 16 + lo);
      if (isUnreserved(decoded)) {
        sb.append(decoded);
      } else {
        sb.append('%').append(Character.toUpperCase(s.charAt(i + 1)))
            .append(Character.toUpperCase(s.charAt(i + 2)));
      }
      i += 2;
    }
    return sb.toString();
  }

  private static boolean isUnreserved(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || c == '-' || c == '.' || c == '_' || c == '~';
  }
}
