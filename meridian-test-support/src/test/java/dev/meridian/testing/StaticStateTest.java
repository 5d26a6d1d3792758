package dev.meridian.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The scan finds what it is for: this module's test classes hold both kinds of static. */
class StaticStateTest {
  record Point(int x, String name) {}

  record Holder(List<String> names) {}

  enum Color { RED, GREEN }

  static final class Fixture {
    static final int MAX = 3;
    static final String NAME = "fixture";
    static final List<String> NAMES = List.of("a", "b");
    static final Map<String, Point> POINTS = Map.of("p", new Point(1, "p"));
    static final Pattern PATTERN = Pattern.compile("a+");
    static final System.Logger LOG = System.getLogger("fixture");
    static final Color COLOR = Color.RED;
    static final Runnable NOTHING = () -> {};
    static final Object SENTINEL = new Object();
    static final String[] NO_STRINGS = {};
  }

  @SuppressWarnings("unused")
  static final class Mutable {
    static int counter;
    static final AtomicLong SERIALIZED = new AtomicLong();
    static final List<String> CACHE = new ArrayList<>();
    static final String[] NAMES = {"a"};
    static final Holder HOLDER = new Holder(new ArrayList<>());
    static final Map<String, List<String>> NESTED = Map.of("k", new ArrayList<>());
    static final Counter COUNTER = new Counter();
  }

  static final class Counter {
    long n;
  }

  @Test
  void findsEveryMutableStaticAndNothingElse() {
    StaticState.Result r = StaticState.scan(StaticStateTest.class);
    assertThat(r.classes()).isGreaterThanOrEqualTo(6);
    String m = Mutable.class.getName() + "#";
    assertThat(r.problems()).extracting(p -> p.substring(0, p.indexOf(':')))
        .containsExactlyInAnyOrder(m + "counter", m + "SERIALIZED", m + "CACHE", m + "NAMES",
            m + "HOLDER", m + "NESTED", m + "COUNTER");
    assertThat(r.problems()).anyMatch(p -> p.startsWith(m + "counter: not final"))
        .anyMatch(p -> p.startsWith(m + "HOLDER: holds a java.util.ArrayList at .names"))
        .anyMatch(p -> p.startsWith(m + "COUNTER: holds a " + Counter.class.getName()
            + " whose field n is not final"));
  }
}
