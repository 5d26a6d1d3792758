package dev.meridian.client;

import java.util.Map;
import java.util.TreeMap;

/**
 * An xDS resource name in the {@code xdstp://} scheme (gRFC A47, xDS "Resource names"):
 * {@code xdstp://[authority]/{type}/{id}[?{context parameters}]}. The canonical form sorts the
 * context parameters, so equal names compare equal.
 */
record XdstpName(String authority, String type, String id, Map<String, String> params) {
  public static final String SCHEME = "xdstp://";

  public XdstpName {
    params = Map.copyOf(params);
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
    String authority = rest.substring(0, slash);
    String path = rest.substring(slash + 1);
    int typeEnd = path.indexOf('/');
    if (typeEnd <= 0) {
      throw new IllegalArgumentException("xdstp name without a resource id: " + name);
    }
    Map<String, String> params = new TreeMap<>();
    if (!query.isEmpty()) {
      for (String kv : query.split("&")) {
        int eq = kv.indexOf('=');
        params.put(eq < 0 ? kv : kv.substring(0, eq), eq < 0 ? "" : kv.substring(eq + 1));
      }
    }
    return new XdstpName(authority, path.substring(0, typeEnd), path.substring(typeEnd + 1), params);
  }

  /** The name with its context parameters sorted. */
  public String canonical() {
    StringBuilder sb = new StringBuilder(SCHEME).append(authority).append('/').append(type)
        .append('/').append(id);
    if (!params.isEmpty()) {
      sb.append('?');
      boolean first = true;
      for (Map.Entry<String, String> e : new TreeMap<>(params).entrySet()) {
        if (!first) {
          sb.append('&');
        }
        first = false;
        sb.append(e.getKey()).append('=').append(e.getValue());
      }
    }
    return sb.toString();
  }
}
