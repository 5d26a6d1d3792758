package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The per-client version bookkeeping that shares structure with snapshots (DESIGN "Fan-out"). */
class VersionMapTest {
  static Map<String, String> base(int n) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < n; i++) {
      m.put("r" + i, "v1");
    }
    return Map.copyOf(m);
  }

  @Test
  void editsReadLikeAMap() {
    VersionMap m = VersionMap.shared(base(3));
    VersionMap e = m.edit().put("r0", "v2").remove("r1").put("new", "v1").commit();
    assertThat(e.get("r0")).isEqualTo("v2");
    assertThat(e.get("r1")).isNull();
    assertThat(e.get("r2")).isEqualTo("v1");
    assertThat(e.get("new")).isEqualTo("v1");
    assertThat(e.size()).isEqualTo(3);
    assertThat(e.toMap()).isEqualTo(Map.of("r0", "v2", "r2", "v1", "new", "v1"));
    assertThat(m.toMap()).isEqualTo(base(3)); // immutable
    // Putting the base's own version back removes the difference.
    VersionMap back = e.edit().put("r0", "v1").put("r1", "v1").remove("new").commit();
    assertThat(back.isShared(m.toMap())).isTrue();
    assertThat(e.edit().clear().commit().isEmpty()).isTrue();
  }

  @Test
  void aClientThatCatchesUpSharesTheSnapshotsMap() {
    Map<String, String> snapshot = base(1000);
    VersionMap.Editor e = VersionMap.EMPTY.edit();
    snapshot.forEach(e::put);
    VersionMap caughtUp = e.commit(snapshot);
    assertThat(caughtUp.isShared(snapshot)).isTrue();
  }

  @Test
  void inSyncWildcardClientsShareOneMapWhateverTheirNumber() {
    List<XdsResource> clusters = new java.util.ArrayList<>();
    for (int i = 0; i < 200; i++) {
      clusters.add(Fixtures.cluster("c" + i));
    }
    ServedConfig cfg = new ServedConfig(Snapshot.of(clusters), List.of());
    Map<String, String> shared = cfg.defaults().get(ResourceType.CLUSTER).versionMap();
    for (int i = 0; i < 20; i++) {
      SotwPeer peer = new SotwPeer(true, null, cfg);
      peer.subscribe(ResourceType.CLUSTER);
      peer.ack(ResourceType.CLUSTER);
      SotwTypeState s = (SotwTypeState) peer.stream.states.get(ResourceType.CLUSTER);
      assertThat(s.clientHolds().isShared(shared)).isTrue();
      assertThat(s.acked.isShared(shared)).isTrue();
      // A client naming every endpoint set shares too, for what it was sent and what it ACKed.
      List<XdsResource> clas = new java.util.ArrayList<>();
      for (int j = 0; j < 100; j++) {
        clas.add(Fixtures.endpoints("c" + j, 1000 + j));
      }
      ServedConfig eds = new ServedConfig(Snapshot.of(clas), List.of());
      String[] names = clas.stream().map(XdsResource::name).toArray(String[]::new);
      SotwPeer named = new SotwPeer(true, null, eds);
      named.subscribe(ResourceType.ENDPOINT, names);
      named.ack(ResourceType.ENDPOINT, names);
      Map<String, String> edsShared = eds.defaults().get(ResourceType.ENDPOINT).versionMap();
      TypeState es = named.stream.states.get(ResourceType.ENDPOINT);
      assertThat(es.clientHolds().isShared(edsShared)).isTrue();
      assertThat(es.acked.isShared(edsShared)).isTrue();
      assertThat(es.lastResponse.isShared(edsShared)).isTrue();
      DeltaPeer delta = new DeltaPeer(true, null, cfg);
      delta.subscribe(ResourceType.CLUSTER, "*");
      assertThat(((DeltaTypeState) delta.stream.states.get(ResourceType.CLUSTER)).clientHolds()
          .isShared(shared)).isTrue();
    }
  }

  @Test
  void clientsNamingTheSameManyResourcesShareOneSubscriptionSet() {
    List<String> names = new java.util.ArrayList<>();
    for (int i = 0; i < 500; i++) {
      names.add("cla-" + i);
    }
    Sharing hub = Sharing.interning();
    Subscription a = new Subscription(hub);
    Subscription b = new Subscription(hub);
    a.replace(new java.util.ArrayList<>(names));
    b.replace(names.stream().map(String::new).toList());
    assertThat(a.names()).isSameAs(b.names());
    // An ACK repeating the names changes nothing and allocates no new set.
    Set<String> before = a.names();
    assertThat(a.replace(names).isEmpty()).isTrue();
    assertThat(a.names()).isSameAs(before);
  }
}
