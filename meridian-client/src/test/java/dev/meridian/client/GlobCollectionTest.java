package dev.meridian.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.internal.server.MeridianServer;
import dev.meridian.testing.ConfigFiles;
import dev.meridian.xds.ResourceType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Watches on glob collections (xDS TP1 "Glob"; Delta only), against real Meridian servers: the
 * members come and go by their full names, and the collection goes to its authority's server
 * (gRFC A47).
 */
class GlobCollectionTest {
  private static final String CDS = "envoy.config.cluster.v3.Cluster";
  private static final String MINE = "xdstp://mine.example/" + CDS + "/";
  private static final String GLOB = MINE + "svc/*";

  @TempDir
  Path dir;
  private final java.util.List<MeridianServer> servers = new java.util.ArrayList<>();
  private XdsClient client;

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    servers.forEach(MeridianServer::close);
  }

  private static String clusters(String... names) {
    StringBuilder yaml = new StringBuilder("resources:\n");
    for (String n : names) {
      yaml.append("  - { \"@type\": type.googleapis.com/envoy.config.cluster.v3.Cluster, name: \"")
          .append(n).append("\", type: EDS, connect_timeout: 1s,")
          .append(" eds_cluster_config: { eds_config: { ads: {}, resource_api_version: V3 } } }\n");
    }
    return yaml.toString();
  }

  private MeridianServer serve(Path config, String yaml, Set<String> authorities)
      throws Exception {
    Files.createDirectories(config.getParent());
    Files.writeString(config, yaml);
    MeridianServer s = new MeridianServer(new MeridianServer.Options(config, "127.0.0.1", 0, 0, 100)
        .withAuthorities(authorities)).start();
    servers.add(s);
    return s;
  }

  /** A bootstrap whose top-level server is {@code main}, and mine.example's is {@code mine}. */
  private XdsClient connect(ClientVariant v, MeridianServer main, MeridianServer mine)
      throws Exception {
    String bootstrap = """
        {
          "xds_servers": [{"server_uri": "127.0.0.1:%d", "channel_creds": [{"type": "insecure"}]}],
          "node": {"id": "glob"},
          "authorities": {
            "mine.example": {
              "xds_servers": [{"server_uri": "127.0.0.1:%d", "channel_creds": [{"type": "insecure"}]}]
            }
          }
        }
        """.formatted(main.xdsPort(), mine.xdsPort());
    client = XdsClient.create(Bootstrap.fromJson(bootstrap),
        XdsClient.Options.defaults().withProtocol(v.protocol).withMode(v.mode));
    return client;
  }

  // TP1 "Glob": the members are the resources directly under the collection's path with the same
  // context parameters, sent with their full names; a change of the config adds and removes them
  // (Delta resources and removed_resources).
  @ParameterizedTest
  @EnumSource(value = ClientVariant.class, names = {"DELTA_ADS", "DELTA_PER_TYPE"})
  void globWatchSeesMembersComeAndGo(ClientVariant v) throws Exception {
    Path config = dir.resolve("mine").resolve("config.yaml");
    MeridianServer s = serve(config, clusters(MINE + "svc/a", MINE + "svc/b", MINE + "other/c",
        MINE + "svc/a/deeper", MINE + "svc/b?k=v"), Set.of());
    connect(v, s, s);
    RecordingWatcher members = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, GLOB, members);
    Await.until("two members", () -> members.latest.size() == 2);
    assertThat(members.latest).containsOnlyKeys(MINE + "svc/a", MINE + "svc/b");

    ConfigFiles.replaceByRename(config, clusters(MINE + "svc/b", MINE + "svc/d", MINE + "other/c"));
    Await.until("svc/a gone and svc/d come", () -> members.latest.keySet()
        .equals(Set.of(MINE + "svc/b", MINE + "svc/d")));
    assertThat(members.events).contains("dne:" + MINE + "svc/a", "changed:" + MINE + "svc/d");
    assertThat(members.errors).isEmpty();

    // A second watch of the collection gets the members the client holds at once.
    RecordingWatcher late = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, GLOB, late);
    Await.until("the held members", () -> late.latest.size() == 2);
    assertThat(late.latest).containsOnlyKeys(MINE + "svc/b", MINE + "svc/d");
  }

  // TP1 "Glob": a member named by a watch of its own stays subscribed through its collection when
  // that watch goes; its deletion still reaches the collection's watchers. (Found in review.)
  @ParameterizedTest
  @EnumSource(value = ClientVariant.class, names = {"DELTA_ADS", "DELTA_PER_TYPE"})
  void memberWatchedByNameAndThroughItsCollectionIsStillFollowedWhenTheNamedWatchGoes(
      ClientVariant v) throws Exception {
    Path config = dir.resolve("both").resolve("config.yaml");
    MeridianServer s = serve(config, clusters(MINE + "svc/a", MINE + "svc/b"), Set.of());
    connect(v, s, s);
    RecordingWatcher members = new RecordingWatcher();
    RecordingWatcher one = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, GLOB, members);
    Watch named = client.watch(ResourceType.CLUSTER, MINE + "svc/a", one);
    Await.until("both members and the named one", () -> members.latest.size() == 2
        && one.latest.containsKey(MINE + "svc/a"));
    named.cancel();

    ConfigFiles.replaceByRename(config, clusters(MINE + "svc/b"));
    Await.until("svc/a's deletion", () -> members.events.contains("dne:" + MINE + "svc/a"));
    assertThat(members.latest).containsOnlyKeys(MINE + "svc/b");
    assertThat(members.errors).isEmpty();
  }

  // LEDS (Envoy's "LEDS" architecture page; leds.proto): a locality's endpoints are LbEndpoint
  // resources in the glob collection its leds_collection_name names, each named by its
  // Resource wrapper; the client watches the collection and follows endpoints coming and going.
  @ParameterizedTest
  @EnumSource(value = ClientVariant.class, names = {"DELTA_ADS", "DELTA_PER_TYPE"})
  void ledsEndpointsOfALocalityArriveThroughItsCollection(ClientVariant v) throws Exception {
    Path config = dir.resolve("leds").resolve("config.yaml");
    MeridianServer s = serve(config, leds("one", "two"), Set.of());
    connect(v, s, s);
    RecordingWatcher cla = new RecordingWatcher();
    client.watch(ResourceType.ENDPOINT, "backend", cla);
    Await.until("the assignment", () -> cla.latest.containsKey("backend"));
    String collection = ((io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment)
        cla.latest.get("backend").message()).getEndpoints(0).getLedsClusterLocalityConfig()
        .getLedsCollectionName();
    assertThat(collection).isEqualTo(ZONE_A);

    RecordingWatcher endpoints = new RecordingWatcher();
    client.watch(ResourceType.LB_ENDPOINT, collection, endpoints);
    Await.until("two endpoints", () -> endpoints.latest.size() == 2);
    assertThat(endpoints.latest).containsOnlyKeys(LEDS + "one", LEDS + "two");
    assertThat(((io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint)
        endpoints.latest.get(LEDS + "two").message()).getEndpoint().getAddress().getSocketAddress()
        .getPortValue()).isEqualTo(8082);

    ConfigFiles.replaceByRename(config, leds("two", "three"));
    Await.until("one gone, three come", () -> endpoints.latest.keySet()
        .equals(Set.of(LEDS + "two", LEDS + "three")));
    assertThat(endpoints.events).contains("dne:" + LEDS + "one");
    assertThat(endpoints.errors).isEmpty();
  }

  private static final String LEDS =
      "xdstp://mine.example/envoy.config.endpoint.v3.LbEndpoint/backend/zone-a/";
  private static final String ZONE_A = LEDS + "*";

  /** A CLA whose one locality is fed by LEDS, and the endpoints {@code ids} of that locality. */
  private static String leds(String... ids) {
    java.util.Map<String, Integer> endpoints = new java.util.LinkedHashMap<>();
    for (String id : ids) {
      endpoints.put(LEDS + id, 8080 + java.util.List.of("zero", "one", "two", "three").indexOf(id));
    }
    return ConfigFiles.leds("backend", ZONE_A, endpoints);
  }

  // TP1 "Glob": "SotW is not supported with the new collections".
  @ParameterizedTest
  @EnumSource(value = ClientVariant.class, names = {"SOTW_ADS", "SOTW_PER_TYPE"})
  void globWatchOverSotwIsRefused(ClientVariant v) throws Exception {
    MeridianServer s = serve(dir.resolve("c").resolve("config.yaml"), clusters(MINE + "svc/a"),
        Set.of());
    connect(v, s, s);
    assertThatThrownBy(() -> client.watch(ResourceType.CLUSTER, GLOB, new RecordingWatcher()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(GLOB).hasMessageContaining("incremental (Delta)");
    assertThatThrownBy(() -> client.watch(ResourceType.CLUSTER,
        java.util.List.of(MINE + "svc/a", GLOB), new RecordingWatcher()))
        .isInstanceOf(IllegalArgumentException.class);
    // A singleton xdstp name works on SotW (A47).
    RecordingWatcher one = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, MINE + "svc/a", one);
    Await.until("the cluster", () -> one.latest.containsKey(MINE + "svc/a"));
  }

  // gRFC A47: an xdstp name, a glob collection too, goes to its authority's xds_servers; plain
  // names to the top-level ones. Each server serves only what it is the authority of.
  @ParameterizedTest
  @EnumSource(value = ClientVariant.class, names = {"DELTA_ADS", "DELTA_PER_TYPE"})
  void globCollectionGoesToItsAuthoritysServer(ClientVariant v) throws Exception {
    MeridianServer main = serve(dir.resolve("main").resolve("config.yaml"),
        clusters("plain", MINE + "svc/on-main"), Set.of("main.example"));
    MeridianServer mine = serve(dir.resolve("mine").resolve("config.yaml"),
        clusters("plain-on-mine", MINE + "svc/a", MINE + "svc/b"), Set.of("mine.example"));
    connect(v, main, mine);
    RecordingWatcher members = new RecordingWatcher();
    RecordingWatcher plain = new RecordingWatcher();
    client.watch(ResourceType.CLUSTER, GLOB, members);
    client.watch(ResourceType.CLUSTER, "plain", plain);
    Await.until("the members from mine.example's server", () -> members.latest.size() == 2);
    Await.until("the plain cluster from the top-level server",
        () -> plain.latest.containsKey("plain"));
    assertThat(members.latest).containsOnlyKeys(MINE + "svc/a", MINE + "svc/b");
    assertThat(client.serverInUse("mine.example")).get()
        .extracting(Bootstrap.ServerInfo::serverUri).isEqualTo("127.0.0.1:" + mine.xdsPort());
  }
}
