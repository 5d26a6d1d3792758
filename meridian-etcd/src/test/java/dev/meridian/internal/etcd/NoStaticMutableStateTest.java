package dev.meridian.internal.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.meridian.testing.StaticState;
import org.junit.jupiter.api.Test;

/** Issue 22: no static mutable state in the etcd store (see {@link StaticState}). */
class NoStaticMutableStateTest {
  @Test
  void everyStaticFieldOfTheEtcdStoreIsImmutable() {
    StaticState.Result r = StaticState.scan(EtcdConfigSource.class);
    assertThat(r.roots()).hasSize(1);
    assertThat(r.classes()).isGreaterThan(9);
    assertThat(r.staticFields()).isGreaterThan(9);
    assertThat(r.problems()).as(StaticState.describe(r)).isEmpty();
  }
}
