package dev.meridian.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Spec "How the client specifies what resources to return", SotW: every request names the whole set. */
class SubscriptionTest {
  static List<String> names(int n) {
    return IntStream.range(0, n).mapToObj(i -> new String("cluster-" + i)).toList();
  }

  @ParameterizedTest
  @EnumSource(Sharings.class)
  void repeatingTheSameLargeSetIsNoChangeInAnyOrder(Sharings sharing) {
    Subscription s = new Subscription(sharing.create());
    Subscription.Change first = s.replace(names(1000));
    assertThat(first.added()).hasSize(1000);
    // The usual ACK: equal names (fresh String instances, as parsed), same order.
    assertThat(s.replace(names(1000)).isEmpty()).isTrue();
    List<String> shuffled = new ArrayList<>(names(1000));
    Collections.shuffle(shuffled, new java.util.Random(1));
    assertThat(s.replace(shuffled).isEmpty()).isTrue();
    assertThat(s.replace(names(1000)).isEmpty()).isTrue();
  }

  @ParameterizedTest
  @EnumSource(Sharings.class)
  void aRenamedNameAtTheSameSizeIsAChange(Sharings sharing) {
    Subscription s = new Subscription(sharing.create());
    s.replace(names(1000));
    List<String> next = new ArrayList<>(names(1000));
    next.set(500, "other");
    Subscription.Change c = s.replace(next);
    assertThat(c.added()).containsExactly("other");
    assertThat(c.removed()).containsExactly("cluster-500");
    // And back: the remembered order is the latest request's, not the first one's.
    Subscription.Change back = s.replace(names(1000));
    assertThat(back.added()).containsExactly("cluster-500");
    assertThat(back.removed()).containsExactly("other");
  }

  @ParameterizedTest
  @EnumSource(Sharings.class)
  void addingTheWildcardToALargeSetIsAChange(Sharings sharing) {
    Subscription s = new Subscription(sharing.create());
    s.replace(names(100));
    List<String> withStar = new ArrayList<>(names(99));
    withStar.add(Subscription.WILDCARD);
    withStar.add("cluster-99");
    Subscription.Change c = s.replace(withStar);
    assertThat(c.wildcardAdded()).isTrue();
    assertThat(s.isWildcard()).isTrue();
    assertThat(s.replace(withStar).isEmpty()).isTrue();
    assertThat(s.replace(names(100)).wildcardRemoved()).isTrue();
  }

  @Test
  void clientsWithTheSameLargeSubscriptionShareOneSet() {
    Sharing hub = Sharing.interning();
    Subscription a = new Subscription(hub);
    Subscription b = new Subscription(hub);
    a.replace(names(1000));
    b.replace(names(1000));
    assertThat(a.names()).isSameAs(b.names());
  }

  @ParameterizedTest
  @EnumSource(Sharings.class)
  void deltaUpdatesAfterSotwStyleRequestsAreNotMistakenForRepeats(Sharings sharing) {
    Subscription s = new Subscription(sharing.create());
    s.replace(names(100));
    s.update(List.of(), List.of("cluster-5"));
    assertThat(s.names()).hasSize(99);
    // The same list as the earlier request now re-adds cluster-5.
    assertThat(s.replace(names(100)).added()).containsExactly("cluster-5");
  }

  @ParameterizedTest
  @EnumSource(Sharings.class)
  void aGlobAmongALargeListIsFoundAndForgottenWithIt(Sharings sharing) {
    // TP1 "Glob": a collection named among many names (the walk is shared by clients sending the
    // same list; the answer must follow each stream's own changes).
    String glob = "xdstp://a.example/envoy.config.endpoint.v3.LbEndpoint/c/*";
    Sharing shared = sharing.create();
    List<String> withGlob = new ArrayList<>(names(100));
    withGlob.add(glob);
    Subscription delta = new Subscription(shared);
    delta.update(withGlob, List.of());
    assertThat(delta.globs()).containsExactly(glob);
    Subscription other = new Subscription(shared);
    other.update(names(100), List.of());
    assertThat(other.hasGlobs()).isFalse();
    delta.update(List.of(), List.of(glob));
    assertThat(delta.hasGlobs()).isFalse();
    delta.update(List.of(glob), List.of());
    assertThat(delta.globs()).containsExactly(glob);

    Subscription sotw = new Subscription(shared);
    sotw.replace(withGlob);
    assertThat(sotw.globs()).containsExactly(glob);
    assertThat(sotw.replace(withGlob).isEmpty()).isTrue(); // the ACK
    assertThat(sotw.globs()).containsExactly(glob);
    sotw.replace(names(100));
    assertThat(sotw.hasGlobs()).isFalse();
  }

  @ParameterizedTest
  @EnumSource(Sharings.class)
  void aRepeatedNameDoesNotHideOneDropped(Sharings sharing) {
    // Spec "How the client specifies what resources to return": each SotW request is the whole
    // set; [a, a] after {a, b} drops b, though the two lists have the same length.
    Subscription s = new Subscription(sharing.create());
    s.replace(List.of("a", "b"));
    Subscription.Change c = s.replace(List.of("a", "a"));
    assertThat(c.removed()).containsExactly("b");
    assertThat(s.names()).containsExactly("a");
    assertThat(s.replace(List.of("a", "*", "*")).wildcardAdded()).isTrue();
    assertThat(s.replace(List.of("*", "a")).isEmpty()).isTrue();
  }
}
