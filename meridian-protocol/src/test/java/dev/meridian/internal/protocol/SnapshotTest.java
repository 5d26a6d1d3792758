package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static dev.meridian.internal.protocol.Fixtures.cluster;
import static dev.meridian.internal.protocol.Fixtures.endpoints;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Building a snapshot from the last one: a type whose resources are the same instances is kept. */
class SnapshotTest {
  private final XdsResource a = cluster("a");
  private final XdsResource b = cluster("b");
  private final XdsResource ea = endpoints("a", 80);
  private final Snapshot before = Snapshot.of(List.of(a, b, ea));

  @Test
  void theSameInstancesInAnyOrderKeepTheTypesSnapshot() {
    Snapshot next = Snapshot.of(List.of(endpoints("a", 81), b, a), before);

    assertThat(next.get(ResourceType.CLUSTER)).isSameAs(before.get(ResourceType.CLUSTER));
    assertThat(next.get(ResourceType.ENDPOINT)).isNotSameAs(before.get(ResourceType.ENDPOINT));
    assertThat(next.changedSince(before)).containsOnlyKeys(ResourceType.ENDPOINT);
  }

  @Test
  void equalButNewInstancesOrOneLessOrOneMoreBuildANewSnapshot() {
    for (List<XdsResource> clusters : List.of(List.of(cluster("a"), b), List.of(a),
        List.of(a, b, cluster("c")))) {
      Snapshot next = Snapshot.of(clusters, before);

      assertThat(next.get(ResourceType.CLUSTER)).isNotSameAs(before.get(ResourceType.CLUSTER));
      assertThat(next.get(ResourceType.CLUSTER).resources().values())
          .containsExactlyInAnyOrderElementsOf(clusters);
    }
  }

  @Test
  void aDuplicateIsStillRejectedThoughEveryInstanceIsKnown() {
    // Two of a, none of b: the count matches and each is the last snapshot's own instance.
    assertThatThrownBy(() -> Snapshot.of(List.of(a, a), before))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("duplicate");
  }

  @Test
  void aTypeThatWasEmptyOrIsGoneIsNotKept() {
    Snapshot clustersOnly = Snapshot.of(List.of(a, b), before);

    assertThat(clustersOnly.get(ResourceType.ENDPOINT).size()).isZero();
    assertThat(Snapshot.of(List.of(a, b, ea), clustersOnly).get(ResourceType.ENDPOINT).get("a"))
        .isSameAs(ea);
  }

  /** Issue 26 (gRFC A47): only other authorities' xdstp resources are left out. */
  @Test
  void servingAuthoritiesLeavesOutOtherAuthoritiesAndKeepsTheSnapshotWhenNothingIs() {
    String mine = "xdstp://mine.example/envoy.config.cluster.v3.Cluster/a";
    String theirs = "xdstp://theirs.example/envoy.config.cluster.v3.Cluster/a";
    Snapshot all = Snapshot.of(List.of(cluster("plain"), cluster(mine), cluster(theirs),
        endpoints("e", 1)));
    Snapshot served = all.servingAuthorities(java.util.Set.of("mine.example"));
    assertThat(served.get(ResourceType.CLUSTER).resources()).containsOnlyKeys("plain", mine);
    assertThat(served.get(ResourceType.ENDPOINT)).isSameAs(all.get(ResourceType.ENDPOINT));
    assertThat(served.servingAuthorities(java.util.Set.of("mine.example"))).isSameAs(served);
    assertThat(all.servingAuthorities(java.util.Set.of())).isSameAs(all);
  }
}
