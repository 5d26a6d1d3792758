package dev.meridian.internal.server;

import static dev.meridian.xds.ResourceType.CLUSTER;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import dev.meridian.internal.protocol.ClientText;
import dev.meridian.internal.protocol.LogLine;
import dev.meridian.internal.protocol.NodeBound;
import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Strings a client chose cost the log and the admin pages a few hundred bytes each, whatever their
 * size; a node id or cluster of megabytes is refused before anything keeps it.
 */
class ClientStringsTest {
  @TempDir Path dir;
  private final List<String> lines = new ArrayList<>();
  private final Handler capture = new Handler() {
    @Override public void publish(LogRecord r) {
      synchronized (lines) {
        lines.add(r.getLevel() + " " + r.getMessage());
      }
    }

    @Override public void flush() {}

    @Override public void close() {}
  };
  private final Logger logger = Logger.getLogger("dev.meridian.server");
  private Level before;

  @BeforeEach
  void captureTheLog() {
    before = logger.getLevel();
    logger.setLevel(Level.INFO);
    logger.addHandler(capture);
  }

  @AfterEach
  void release() {
    logger.removeHandler(capture);
    logger.setLevel(before);
  }

  private List<String> logged() {
    synchronized (lines) {
      return List.copyOf(lines);
    }
  }

  private long loggedBytes() {
    return logged().stream().mapToLong(l -> l.getBytes(StandardCharsets.UTF_8).length).sum();
  }

  @Test
  void aMegabyteNodeIdIsRefusedAndCostsTheLogOneShortLine() throws Exception {
    try (OpsFixture f = new OpsFixture(dir, o -> o.withRestPort(0))) {
      long start = loggedBytes();
      String huge = "n".repeat(1024 * 1024);
      RawXdsClient.Sotw c = RawXdsClient.sotwAds(f.channel, Node.newBuilder().setId(huge).build());
      c.send(CLUSTER, "", "");
      Status s = c.awaitClose();
      assertThat(s.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(s.getDescription()).isEqualTo("node.id is 1048576 bytes; this server takes at most "
          + NodeBound.MAX_BYTES);
      OpsFixture.await("stream_close logged",
          () -> logged().stream().anyMatch(l -> l.contains("stream_close")));

      RawXdsClient.Sotw cluster = RawXdsClient.sotwAds(f.channel,
          Node.newBuilder().setId("ok").setCluster(huge).build());
      cluster.send(CLUSTER, "", "");
      assertThat(cluster.awaitClose().getDescription()).startsWith("node.cluster is 1048576 bytes");

      HttpResponse<String> rest = f.http.send(HttpRequest.newBuilder(URI.create(
              "http://127.0.0.1:" + f.server.restPort() + "/v3/discovery:clusters"))
          .POST(HttpRequest.BodyPublishers.ofString("{\"node\": {\"id\": \"" + huge + "\"}}"))
          .build(), HttpResponse.BodyHandlers.ofString());
      assertThat(rest.statusCode()).isEqualTo(400);
      assertThat(rest.body()).startsWith("node.id is 1048576 bytes");

      assertThat(loggedBytes() - start).as("log growth for three refused requests")
          .isLessThan(4 * 1024);
      assertThat(f.getJson("/clients").get("count").getAsInt()).isZero();
    }
  }

  @Test
  void aNodeIdAtTheBoundIsServedAndShownClipped() throws Exception {
    try (OpsFixture f = new OpsFixture(dir)) {
      String id = "i".repeat(NodeBound.MAX_BYTES);
      String message = "m".repeat(100_000);
      String version = "v".repeat(3000);
      RawXdsClient.Sotw c = RawXdsClient.sotwAds(f.channel, Node.newBuilder().setId(id)
          .setCluster("c".repeat(NodeBound.MAX_BYTES)).build());
      DiscoveryResponse r = c.subscribe(CLUSTER);
      assertThat(r.getResourcesCount()).isPositive();
      c.nack(r.toBuilder().setVersionInfo(version).build(), version, message);
      OpsFixture.await("the NACK logged",
          () -> logged().stream().anyMatch(l -> l.contains(" nack ")));

      String clipped = ClientText.clip(id);
      assertThat(clipped).startsWith("i".repeat(ClientText.MAX_BYTES))
          .endsWith("…(+" + (NodeBound.MAX_BYTES - ClientText.MAX_BYTES) + " bytes)");
      for (String l : logged()) {
        // a line holds a handful of clipped values: never a whole one of these
        assertThat(l.length()).as(l.substring(0, Math.min(80, l.length())))
            .isLessThan(8 * ClientText.MAX_BYTES);
      }
      assertThat(logged()).anySatisfy(l -> assertThat(l).contains("stream_open")
          .contains("node=" + LogLine.quote(clipped)));
      assertThat(logged()).anySatisfy(l -> assertThat(l).contains(" nack ")
          .contains("message=\"" + "m".repeat(ClientText.MAX_BYTES) + "…(+"));

      JsonObject client = f.getJson("/clients").getAsJsonArray("clients").get(0)
          .getAsJsonObject();
      assertThat(client.get("node_id").getAsString()).isEqualTo(clipped);
      assertThat(client.get("node_cluster").getAsString()).endsWith(" bytes)");
      assertThat(f.get("/clients").body().length()).isLessThan(16 * 1024);
      c.close();
    }
  }
}
