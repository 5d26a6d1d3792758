package dev.meridian.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class MainTest {
  private String saved;

  @BeforeEach
  void save() {
    saved = System.getProperty(Main.NETTY_REFLECTION);
  }

  @AfterEach
  void restore() {
    if (saved == null) {
      System.clearProperty(Main.NETTY_REFLECTION);
    } else {
      System.setProperty(Main.NETTY_REFLECTION, saved);
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
}
