package dev.meridian.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A client's string is cut at a UTF-8 byte bound, marked with what was left out. */
class ClientTextTest {
  @Test
  void aStringThatFitsIsItself() {
    String s = "é".repeat(ClientText.MAX_BYTES / 2); // exactly MAX_BYTES in UTF-8
    assertThat(ClientText.clip(s)).isSameAs(s);
    assertThat(ClientText.clip(null)).isNull();
  }

  @Test
  void aLongerStringKeepsItsFirstBytesAndSaysHowManyWereLeftOut() {
    String s = "a".repeat(ClientText.MAX_BYTES) + "bcd";
    assertThat(ClientText.clip(s)).isEqualTo("a".repeat(ClientText.MAX_BYTES) + "…(+3 bytes)");
  }

  @Test
  void aCharacterIsNeverCutInHalf() {
    String s = "a" + "😀".repeat(ClientText.MAX_BYTES); // 4 UTF-8 bytes, two chars each
    String clipped = ClientText.clip(s);
    String kept = clipped.substring(0, clipped.indexOf('…'));
    assertThat(kept).isEqualTo("a" + "😀".repeat((ClientText.MAX_BYTES - 1) / 4));
    int left = s.getBytes(StandardCharsets.UTF_8).length
        - kept.getBytes(StandardCharsets.UTF_8).length;
    assertThat(clipped).endsWith("…(+" + left + " bytes)");
  }
}
