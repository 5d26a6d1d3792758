package dev.meridian.internal.protocol;

/**
 * A string a client chose (node id, cluster, resource name, version, nonce, NACK message, certificate
 * name), cut to a size fit for a log line or a page. Clients may send megabytes in any of them; one
 * such request must not cost megabytes of log per line it appears in.
 */
public final class ClientText {
  /** The most of a client's string a log line or page shows, in UTF-8 bytes. */
  public static final int MAX_BYTES = 512;

  private ClientText() {}

  /**
   * {@code s} itself when it fits {@link #MAX_BYTES}; else its longest prefix that fits, followed by
   * {@code …(+N bytes)}, N the UTF-8 bytes left out. Null stays null.
   */
  public static String clip(String s) {
    if (s == null || s.length() <= MAX_BYTES / 3) {
      return s; // at most 3 UTF-8 bytes a char
    }
    int used = 0;
    int cut = -1;
    long total = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      int n;
      if (Character.isHighSurrogate(c) && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        n = 4;
        i++;
      } else {
        n = c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
      }
      total += n;
      if (cut < 0) {
        if (used + n > MAX_BYTES) {
          cut = i - (n == 4 ? 1 : 0);
        } else {
          used += n;
        }
      }
    }
    return cut < 0 ? s : s.substring(0, cut) + "…(+" + (total - used) + " bytes)";
  }
}
