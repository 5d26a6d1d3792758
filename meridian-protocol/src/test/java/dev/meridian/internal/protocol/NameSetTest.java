package dev.meridian.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

class NameSetTest {
  @Test
  void aSharedSetIsCopiedOnTheFirstWriteAndNeverChanged() {
    Set<String> shared = Set.of("a", "b", "c");
    NameSet one = new NameSet();
    NameSet two = new NameSet();
    one.addShared(shared);
    two.addShared(shared);
    one.remove("a");
    two.add("d");
    assertThat(shared).containsExactlyInAnyOrder("a", "b", "c");
    assertThat(one).containsExactlyInAnyOrder("b", "c");
    assertThat(two).containsExactlyInAnyOrder("a", "b", "c", "d");
    one.removeIf(n -> n.equals("b"));
    assertThat(one).containsExactly("c");
    two.clear();
    assertThat(two.isEmpty()).isTrue();
    assertThat(shared).hasSize(3);
  }

  @Test
  void addingASharedSetToANonEmptyOneMerges() {
    NameSet s = new NameSet();
    s.add("x");
    s.addShared(Set.of("a", "b"));
    assertThat(s).containsExactlyInAnyOrder("x", "a", "b");
    assertThat(s.size()).isEqualTo(3);
    assertThat(s.contains("a")).isTrue();
  }
}
