package dev.meridian.internal.config;

import java.util.Locale;

/** "Did you mean": the known name closest to a misspelt one, if it is close enough to be a typo. */
final class Suggest {
  private Suggest() {}

  /**
   * How far apart two names are, ignoring case and underscores (so {@code connectTimeout},
   * {@code connect_timeout} and {@code CONNECT_TIMEOUT} are one name), counting insertions,
   * deletions, substitutions and swaps of neighbours; {@link Integer#MAX_VALUE} when more than a
   * typo apart.
   */
  static int distance(String typed, String known) {
    String a = normalize(typed);
    String b = normalize(known);
    int limit = limit(a.length());
    if (Math.abs(a.length() - b.length()) > limit) {
      return Integer.MAX_VALUE;
    }
    int[][] d = new int[a.length() + 1][b.length() + 1];
    for (int i = 0; i <= a.length(); i++) {
      d[i][0] = i;
    }
    for (int j = 0; j <= b.length(); j++) {
      d[0][j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        int v = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
        if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
          v = Math.min(v, d[i - 2][j - 2] + 1);
        }
        d[i][j] = v;
      }
    }
    int result = d[a.length()][b.length()];
    return result <= limit ? result : Integer.MAX_VALUE;
  }

  /** Whether a name is written in lowerCamelCase (then suggest the JSON name, not snake_case). */
  static boolean camel(String name) {
    if (name.indexOf('_') >= 0) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      if (Character.isUpperCase(name.charAt(i))) {
        return true;
      }
    }
    return false;
  }

  /** One edit for short names, two up to 8 characters, three beyond. */
  private static int limit(int length) {
    return length <= 4 ? 1 : length <= 8 ? 2 : 3;
  }

  private static String normalize(String s) {
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c != '_') {
        sb.append(c);
      }
    }
    return sb.toString().toLowerCase(Locale.ROOT);
  }
}
