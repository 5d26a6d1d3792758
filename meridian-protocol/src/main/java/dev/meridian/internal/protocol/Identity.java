package dev.meridian.internal.protocol;

import java.util.regex.Pattern;

/**
 * What a verified identity is, and which globs may match it. Identities are typed, and the type
 * shows in the text: a URI identity (a SPIFFE ID {@code spiffe://example.org/ns/payments/sa/api},
 * from a certificate's URI SAN) has a scheme and {@code ://}; a DNS identity (from a DNS SAN) is a
 * host name, which never holds {@code :} or {@code /}. A glob with {@code ://} is a URI glob and
 * matches only URI identities; any other glob is a DNS glob and matches only host names, so a DNS
 * SAN spelled like a SPIFFE ID is no one's identity and a {@code *} glob never takes a URI.
 */
public final class Identity {
  /** RFC 3986 scheme, then {@code ://} and something after it. */
  private static final Pattern URI = Pattern.compile("[A-Za-z][A-Za-z0-9+.-]*://\\S+");
  /** RFC 1123 label: letters, digits, hyphens inside, 1 to 63 characters. */
  private static final Pattern LABEL = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?");
  /** What a DNS glob may hold: host name characters and the two wildcards. */
  private static final Pattern HOST_GLOB = Pattern.compile("[A-Za-z0-9.*?-]+");

  private Identity() {}

  /** Whether {@code glob} names URI identities (it holds {@code ://}); else it names DNS ones. */
  public static boolean isUriGlob(String glob) {
    return glob.contains("://");
  }

  /** Whether {@code s} is a URI identity: a scheme, {@code ://}, and no white space. */
  public static boolean isUri(String s) {
    return s != null && URI.matcher(s).matches();
  }

  /**
   * Whether {@code s} is a host name (RFC 1123): dot-separated labels of letters, digits and inner
   * hyphens, at most 253 characters. A wildcard label ({@code *.example.org}) is not one.
   */
  public static boolean isHostName(String s) {
    if (s == null || s.isEmpty() || s.length() > 253) {
      return false;
    }
    for (String label : s.split("\\.", -1)) {
      if (!LABEL.matcher(label).matches()) {
        return false;
      }
    }
    return true;
  }

  /** The type of {@code identity} for people: {@code uri}, {@code dns}, or null if neither. */
  public static String typeOf(String identity) {
    return isUri(identity) ? "uri" : isHostName(identity) ? "dns" : null;
  }

  /** Why {@code glob} can never match an identity, or null when it can. */
  public static String globProblem(String glob) {
    if (isUriGlob(glob) || HOST_GLOB.matcher(glob).matches()) {
      return null;
    }
    return "identity glob '" + glob + "' is neither a URI glob (with '://', e.g. "
        + "'spiffe://example.org/ns/payments/*') nor a DNS glob (host name characters, '*' "
        + "and '?', e.g. '*.payments.example.org')";
  }

  /** A compiled identity glob that matches only identities of its own type. */
  public static final class Glob {
    private final String glob;
    private final boolean uri;
    private final Pattern pattern;

    public Glob(String glob) {
      this.glob = glob;
      this.uri = isUriGlob(glob);
      this.pattern = NodeMatcher.glob(glob);
    }

    /** Whether {@code identity} (null: none) is of this glob's type and matches it. */
    public boolean matches(String identity) {
      return identity != null && (uri ? Identity.isUri(identity) : isHostName(identity))
          && pattern.matcher(identity).matches();
    }

    @Override
    public String toString() {
      return glob;
    }
  }
}
