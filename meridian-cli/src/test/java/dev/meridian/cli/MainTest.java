package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class MainTest {
  private String saved;
  private String savedJfr;

  @BeforeEach
  void save() {
    saved = System.getProperty(Main.NETTY_REFLECTION);
    savedJfr = System.getProperty(Main.NETTY_JFR);
  }

  @AfterEach
  void restore() {
    restore(Main.NETTY_REFLECTION, saved);
    restore(Main.NETTY_JFR, savedJfr);
  }

  private static void restore(String key, String value) {
    if (value == null) {
      System.clearProperty(key);
    } else {
      System.setProperty(key, value);
    }
  }

  @Test
  void nettyMayAllocateUnzeroedDirectMemoryUnlessTheUserSaidOtherwise() {
    System.clearProperty(Main.NETTY_REFLECTION);
    Main.preferUnzeroedDirectBuffers();
    assertThat(System.getProperty(Main.NETTY_REFLECTION)).isEqualTo("true");

    System.setProperty(Main.NETTY_REFLECTION, "false");
    Main.preferUnzeroedDirectBuffers();
    assertThat(System.getProperty(Main.NETTY_REFLECTION)).isEqualTo("false");
  }

  @Test
  void nettyDoesNotStartFlightRecorderUnlessTheUserAskedForItsEvents() {
    // Issue 18: JFR's initialization cost the first response 0.2-0.3 s on 2 cores.
    System.clearProperty(Main.NETTY_JFR);
    Main.noNettyJfrEvents();
    assertThat(System.getProperty(Main.NETTY_JFR)).isEqualTo("false");

    System.setProperty(Main.NETTY_JFR, "true");
    Main.noNettyJfrEvents();
    assertThat(System.getProperty(Main.NETTY_JFR)).isEqualTo("true");
  }
}
