package dev.meridian.internal.protocol;

import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.SortedMap;

/**
 * Versions come from content: a hash of the deterministic serialization, so the same config yields
 * the same versions across restarts, JVMs and replicas (never {@code hashCode()}).
 */
public final class Versions {
  private static final int HEX_CHARS = 16; // 64 bits: collisions are not a practical concern here

  private Versions() {}

  public static String ofBytes(ByteString bytes) {
    MessageDigest d = sha256();
    d.update(bytes.asReadOnlyByteBuffer());
    return hex(d.digest());
  }

  /**
   * Version of a set of resources, from their sorted (name, version) pairs. A type's version is the
   * view-version of all its resources.
   */
  public static String ofView(SortedMap<String, String> nameToVersion) {
    if (nameToVersion.isEmpty()) {
      return EMPTY;
    }
    MessageDigest d = sha256();
    for (Map.Entry<String, String> e : nameToVersion.entrySet()) {
      d.update(e.getKey().getBytes(StandardCharsets.UTF_8));
      d.update((byte) 0);
      d.update(e.getValue().getBytes(StandardCharsets.UTF_8));
      d.update((byte) 0);
    }
    return hex(d.digest());
  }

  /** Version of an empty view; distinct from "" (the client's "nothing yet"). */
  public static final String EMPTY = "empty";

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every JRE", e);
    }
  }

  private static String hex(byte[] digest) {
    return HexFormat.of().formatHex(digest).substring(0, HEX_CHARS);
  }
}
