package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.meridian.xds.ResourceType;
import dev.meridian.testing.ConfigFiles;
import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.status.v3.ClientStatusDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.status.v3.ClientStatusRequest;
import io.envoyproxy.envoy.service.status.v3.ClientStatusResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 21 (and 26): every response names the replica that sent it in
 * {@code control_plane.identifier}: SotW and Delta, ADS and per-type, the shared-body encoding of
 * large responses, REST-JSON and published files; CSDS and {@code /clients} show it too.
 */
class ControlPlaneIdTest {
  enum Variant { SOTW_ADS, SOTW_PER_TYPE, DELTA_ADS, DELTA_PER_TYPE }

  @TempDir Path dir;
  final List<MeridianServer> servers = new ArrayList<>();
  final List<ManagedChannel> channels = new ArrayList<>();

  MeridianServer start(String name, String yaml, java.util.function.UnaryOperator<
      MeridianServer.Options> options) throws Exception {
    Path config = dir.resolve(name + ".yaml");
    Files.writeString(config, yaml);
    MeridianServer s = new MeridianServer(options.apply(
        new MeridianServer.Options(config, "127.0.0.1", 0, 0, 200))).start();
    servers.add(s);
    return s;
  }

  ManagedChannel channel(MeridianServer s) {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", s.xdsPort()).usePlaintext()
        .build();
    channels.add(ch);
    return ch;
  }

  @AfterEach
  void stop() throws Exception {
    for (ManagedChannel ch : channels) {
      ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    servers.forEach(MeridianServer::close);
  }

  static String clusters(int n, int timeout) {
    StringBuilder yaml = new StringBuilder("resources:\n");
    for (int i = 0; i < n; i++) {
      yaml.append(ServeTest.cluster("c" + i, timeout));
    }
    return yaml.toString();
  }

  /** The control_plane identifiers of a wildcard CDS client's first response and of the next. */
  List<String> identifiers(Variant v, MeridianServer s, Path config, String nextYaml)
      throws Exception {
    ManagedChannel ch = channel(s);
    List<String> ids = new ArrayList<>();
    if (v == Variant.SOTW_ADS || v == Variant.SOTW_PER_TYPE) {
      RawXdsClient.Sotw c = v == Variant.SOTW_ADS ? RawXdsClient.sotwAds(ch, "n")
          : RawXdsClient.sotwPerType(ch, ResourceType.CLUSTER, "n");
      DiscoveryResponse first = c.subscribe(ResourceType.CLUSTER);
      ids.add(first.getControlPlane().getIdentifier());
      c.ack(first);
      if (nextYaml != null) {
        ConfigFiles.replaceByRename(config, nextYaml);
        ids.add(c.take(ResourceType.CLUSTER).getControlPlane().getIdentifier());
      }
    } else {
      RawXdsClient.Delta c = v == Variant.DELTA_ADS ? RawXdsClient.deltaAds(ch, "n")
          : RawXdsClient.deltaPerType(ch, ResourceType.CLUSTER, "n");
      c.send(ResourceType.CLUSTER, DeltaDiscoveryRequest.newBuilder());
      DeltaDiscoveryResponse first = c.take(ResourceType.CLUSTER);
      ids.add(first.getControlPlane().getIdentifier());
      c.ack(first);
      if (nextYaml != null) {
        ConfigFiles.replaceByRename(config, nextYaml);
        ids.add(c.take(ResourceType.CLUSTER).getControlPlane().getIdentifier());
      }
    }
    return ids;
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void everyResponseCarriesTheConfiguredIdentifier(Variant v) throws Exception {
    MeridianServer s = start("a", clusters(2, 1), o -> o.withControlPlaneId("replica-a"));
    assertThat(identifiers(v, s, dir.resolve("a.yaml"), clusters(2, 2)))
        .containsExactly("replica-a", "replica-a");
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void largeResponsesEncodedOnceForManyClientsCarryItToo(Variant v) throws Exception {
    // 100 clusters: the whole-type body is shared between streams (SharedBodyMarshaller); the
    // identifier is encoded with each response's own fields, so every client gets it.
    MeridianServer s = start("a", clusters(100, 1), o -> o.withControlPlaneId("replica-a"));
    for (int client = 0; client < 3; client++) {
      assertThat(identifiers(v, s, null, null)).containsExactly("replica-a");
    }
  }

  @ParameterizedTest
  @EnumSource(Variant.class)
  void twoServersInOneJvmEachSendTheirOwnIdentifier(Variant v) throws Exception {
    MeridianServer a = start("a", clusters(100, 1), o -> o.withControlPlaneId("replica-a"));
    MeridianServer b = start("b", clusters(100, 1), o -> o.withControlPlaneId("replica-b"));
    for (int round = 0; round < 2; round++) { // the second round takes the shared-body path
      assertThat(identifiers(v, a, null, null)).containsExactly("replica-a");
      assertThat(identifiers(v, b, null, null)).containsExactly("replica-b");
    }
  }

  @Test
  void withoutTheFlagTheIdentifierIsMeridianAtTheHostName() throws Exception {
    MeridianServer s = start("a", clusters(1, 1), o -> o);
    String id = identifiers(Variant.SOTW_ADS, s, null, null).get(0);
    assertThat(id).isEqualTo(MeridianServer.defaultControlPlaneId()).startsWith("meridian@")
        .hasSizeGreaterThan("meridian@".length());
  }

  @Test
  void defaultIdentifierFallsBackToTheHostnameVariableThenUnknown() {
    assertThat(MeridianServer.defaultControlPlaneId(() -> "meridian-7f9c-x2", "ignored"))
        .isEqualTo("meridian@meridian-7f9c-x2");
    assertThat(MeridianServer.defaultControlPlaneId(() -> {
      throw new java.net.UnknownHostException("no such host");
    }, "pod-3")).isEqualTo("meridian@pod-3");
    assertThat(MeridianServer.defaultControlPlaneId(() -> "", null)).isEqualTo("meridian@unknown");
  }

  @Test
  void restPollsAndPublishedFilesCarryTheIdentifier() throws Exception {
    Path publish = dir.resolve("published");
    MeridianServer s = start("a", clusters(2, 1), o -> o.withControlPlaneId("replica-a")
        .withRestPort(0).withPublish(publish, FilePublisher.Format.JSON));
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + s.restPort() + "/v3/discovery:clusters"))
        .POST(HttpRequest.BodyPublishers.ofString("{\"node\": {\"id\": \"rest-1\"}}"))
        .header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(RestAndFilesTest.parse(r.body()).getControlPlane().getIdentifier())
        .isEqualTo("replica-a");
    String file = Files.readString(FilePublisher.file(publish, "default", ResourceType.CLUSTER,
        FilePublisher.Format.JSON));
    assertThat(RestAndFilesTest.parse(file).getControlPlane().getIdentifier())
        .isEqualTo("replica-a");
  }

  @Test
  void csdsAndTheClientsPageShowTheServersIdentifier() throws Exception {
    MeridianServer s = start("a", clusters(2, 1), o -> o.withControlPlaneId("replica-a"));
    identifiers(Variant.SOTW_ADS, s, null, null);
    ClientStatusResponse csds = ClientStatusDiscoveryServiceGrpc.newBlockingStub(channel(s))
        .withDeadlineAfter(10, TimeUnit.SECONDS)
        .fetchClientStatus(ClientStatusRequest.getDefaultInstance());
    assertThat(csds.getConfig(0).getNode().getMetadata().getFieldsOrThrow(
        CsdsService.CONTROL_PLANE_KEY).getStringValue()).isEqualTo("replica-a");
    HttpResponse<String> clients = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + s.httpPort() + "/clients")).build(),
        HttpResponse.BodyHandlers.ofString());
    JsonObject root = JsonParser.parseString(clients.body()).getAsJsonObject();
    assertThat(root.get("control_plane").getAsString()).isEqualTo("replica-a");
    assertThat(root.get("count").getAsInt()).isEqualTo(1);
  }
}
