package dev.meridian.internal.server;

import static dev.meridian.xds.ResourceType.CLUSTER;
import static dev.meridian.xds.ResourceType.ENDPOINT;
import static dev.meridian.xds.ResourceType.LISTENER;
import static dev.meridian.internal.server.OpsFixture.CDS;
import static dev.meridian.internal.server.OpsFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The admin HTTP port against a live server and raw ADS clients on 127.0.0.1 (issue 9). */
class AdminHttpTest {
  @TempDir Path dir;
  OpsFixture f;

  @BeforeEach
  void start() throws Exception {
    f = new OpsFixture(dir);
  }

  @AfterEach
  void stop() throws Exception {
    f.close();
  }

  private static JsonObject type(JsonObject client, String abbreviation) {
    for (JsonElement t : client.getAsJsonArray("types")) {
      if (t.getAsJsonObject().get("type").getAsString().equals(abbreviation)) {
        return t.getAsJsonObject();
      }
    }
    throw new AssertionError("no " + abbreviation + " in " + client);
  }

  @Test
  void healthzIsLiveAndReadyzSaysConfigLoadedAndServing() throws Exception {
    assertThat(f.get("/healthz").statusCode()).isEqualTo(200);
    assertThat(f.get("/readyz").statusCode()).isEqualTo(200);
    assertThat(f.get("/nope").statusCode()).isEqualTo(404);
  }

  /** Issue 24: the build's version (the Maven project version) and git commit, as JSON. */
  @Test
  void versionServesTheBuildVersionAndCommit() throws Exception {
    var r = f.get("/version");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
    JsonObject body = com.google.gson.JsonParser.parseString(r.body()).getAsJsonObject();
    assertThat(body.keySet()).containsExactly("version", "commit");
    // The build filtered meridian-build.properties: the version is the pom's, never ${...}.
    assertThat(body.get("version").getAsString()).matches("\\d+\\.\\d+\\.\\d+.*");
    // A clone has .git: the full commit id; a source tarball would say "unknown".
    assertThat(body.get("commit").getAsString()).matches("[0-9a-f]{40}|unknown");
    assertThat(body.get("version").getAsString()).isEqualTo(BuildInfo.current().version());
    assertThat(body.get("commit").getAsString()).isEqualTo(BuildInfo.current().commit());
  }

  @Test
  void adminPortIsLoopbackOnlyByDefault() {
    assertThat(new MeridianServer.Options(dir, "0.0.0.0", 0, 0, 0).adminBind())
        .isEqualTo("127.0.0.1");
    assertThat(f.server.httpAddress().getAddress().isLoopbackAddress()).isTrue();
  }

  @Test
  void clientsShowsWhoIsConnectedWhatTheyAckedAndWhyTheyNacked() throws Exception {
    // Spec "ACK/NACK and resource type instance version": an ACK carries the version just sent; a
    // NACK carries error_detail and the version the client keeps running.
    RawXdsClient.Sotw envoy = f.ads("envoy-a", "edge");
    DiscoveryResponse cds = envoy.subscribe(CLUSTER);
    envoy.ack(cds);
    DiscoveryResponse eds = envoy.subscribe(ENDPOINT, "greeter-v1", "missing");
    envoy.ack(eds, "greeter-v1", "missing");
    DiscoveryResponse lds = envoy.subscribe(LISTENER);
    envoy.nack(lds, "", "listener 'http': bad filter chain");

    JsonObject root = awaitClients(c -> type(c, "LDS").get("last_nack").isJsonObject()
        && type(c, "EDS").get("in_sync").getAsBoolean());
    assertThat(root.get("count").getAsInt()).isEqualTo(1);
    JsonObject c = root.getAsJsonArray("clients").get(0).getAsJsonObject();
    assertThat(c.get("node_id").getAsString()).isEqualTo("envoy-a");
    assertThat(c.get("node_cluster").getAsString()).isEqualTo("edge");
    assertThat(c.get("group").getAsString()).isEqualTo("default");
    assertThat(c.get("peer").getAsString()).matches("127\\.0\\.0\\.1:\\d+");
    assertThat(c.get("variant").getAsString()).isEqualTo("sotw");
    assertThat(c.get("ads").getAsBoolean()).isTrue();
    assertThat(c.get("service").getAsString()).isEqualTo("ads");
    assertThat(c.get("method").getAsString())
        .isEqualTo("envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources");
    assertThat(c.get("connected_since").getAsString()).endsWith("Z");
    assertThat(c.get("in_sync").getAsBoolean()).isFalse(); // LDS was rejected

    JsonObject cdsStatus = type(c, "CDS");
    assertThat(cdsStatus.get("type_url").getAsString()).isEqualTo(CDS);
    assertThat(cdsStatus.get("wildcard").getAsBoolean()).isTrue();
    assertThat(cdsStatus.get("last_sent_version").getAsString()).isEqualTo(cds.getVersionInfo());
    assertThat(cdsStatus.get("last_acked_version").getAsString()).isEqualTo(cds.getVersionInfo());
    assertThat(cdsStatus.get("pending_nonce").isJsonNull()).isTrue();
    assertThat(cdsStatus.get("last_nack").isJsonNull()).isTrue();
    assertThat(cdsStatus.get("in_sync").getAsBoolean()).isTrue();
    assertThat(cdsStatus.getAsJsonObject("acked_resource_versions").keySet())
        .containsExactly("greeter-v1", "greeter-v2");

    JsonObject edsStatus = type(c, "EDS");
    assertThat(edsStatus.get("wildcard").getAsBoolean()).isFalse();
    assertThat(names(edsStatus.getAsJsonArray("resource_names")))
        .containsExactly("greeter-v1", "missing");
    assertThat(edsStatus.get("in_sync").getAsBoolean()).isTrue();

    JsonObject ldsStatus = type(c, "LDS");
    assertThat(ldsStatus.get("last_acked_version").isJsonNull()).isTrue();
    assertThat(ldsStatus.get("in_sync").getAsBoolean()).isFalse();
    JsonObject nack = ldsStatus.getAsJsonObject("last_nack");
    assertThat(nack.get("version").getAsString()).isEqualTo(lds.getVersionInfo());
    assertThat(nack.get("kept_version").isJsonNull()).isTrue();
    assertThat(nack.get("code").getAsInt()).isEqualTo(3);
    assertThat(nack.get("message").getAsString()).isEqualTo("listener 'http': bad filter chain");
    assertThat(nack.get("nonce").getAsString()).isEqualTo(lds.getNonce());
    assertThat(nack.get("at").getAsString()).endsWith("Z");

    // A filter by node id glob, then a disconnect: the stream leaves /clients.
    assertThat(f.getJson("/clients?node_id=envoy-*").get("count").getAsInt()).isEqualTo(1);
    assertThat(f.getJson("/clients?node_id=other").get("count").getAsInt()).isZero();
    envoy.close();
    await("stream gone", () -> count() == 0);
  }

  @Test
  void clientsShowsAPendingResponseUntilTheClientAcksAConfigChange() throws Exception {
    RawXdsClient.Sotw envoy = f.ads("envoy-b", "edge");
    envoy.ack(envoy.subscribe(CLUSTER));
    f.reload(OpsFixture.config("2s"));
    DiscoveryResponse update = envoy.take(CLUSTER);
    JsonObject c = awaitClients(x -> !type(x, "CDS").get("pending_nonce").isJsonNull())
        .getAsJsonArray("clients").get(0).getAsJsonObject();
    assertThat(type(c, "CDS").get("pending_nonce").getAsString()).isEqualTo(update.getNonce());
    assertThat(type(c, "CDS").get("in_sync").getAsBoolean()).isFalse();
    envoy.ack(update);
    awaitClients(x -> type(x, "CDS").get("in_sync").getAsBoolean()
        && type(x, "CDS").get("last_acked_version").getAsString().equals(update.getVersionInfo()));
  }

  static final String GROUPED = OpsFixture.config("1s") + """
      groups:
        - name: gateways
          match: { node_id: "gw-*" }
          resources:
            - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
              name: gw-cluster
              connect_timeout: 5s
            - "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret
              name: gw-cert
              tls_certificate:
                private_key: { inline_string: "TOP-SECRET-KEY" }
      """;

  @Test
  void clientsShowsAPerTypeStreamAndTheGroupItsNodeIsIn() throws Exception {
    f.reload(GROUPED);
    RawXdsClient.Sotw gateway = RawXdsClient.sotwPerType(f.channel, CLUSTER, "gw-1");
    gateway.send(CLUSTER, "", "");
    DiscoveryResponse r = gateway.take();
    JsonObject c = awaitClients(x -> !x.get("node_id").isJsonNull())
        .getAsJsonArray("clients").get(0).getAsJsonObject();
    assertThat(c.get("group").getAsString()).isEqualTo("gateways");
    assertThat(c.get("ads").getAsBoolean()).isFalse();
    assertThat(c.get("service").getAsString()).isEqualTo("CDS");
    assertThat(c.get("method").getAsString())
        .isEqualTo("envoy.service.cluster.v3.ClusterDiscoveryService/StreamClusters");
    assertThat(type(c, "CDS").get("pending_nonce").getAsString()).isEqualTo(r.getNonce());
    assertThat(type(c, "CDS").get("last_sent_version").getAsString()).isEqualTo(r.getVersionInfo());
    assertThat(type(c, "CDS").getAsJsonObject("sent_resource_versions").keySet())
        .containsExactly("gw-cluster");
    gateway.close();
  }

  @Test
  void clientsShowsDeltaStreamsWithWhatTheyAcked() throws Exception {
    RawXdsClient.Delta delta = RawXdsClient.deltaAds(f.channel, "delta-1");
    var r = delta.subscribe(CLUSTER, "*");
    delta.ack(r);
    JsonObject c = awaitClients(x -> type(x, "CDS").getAsJsonObject("acked_resource_versions").size() > 0)
        .getAsJsonArray("clients").get(0).getAsJsonObject();
    assertThat(c.get("variant").getAsString()).isEqualTo("delta");
    assertThat(c.get("ads").getAsBoolean()).isTrue();
    assertThat(type(c, "CDS").getAsJsonObject("acked_resource_versions").keySet())
        .containsExactlyInAnyOrderElementsOf(r.getResourcesList().stream()
            .map(io.envoyproxy.envoy.service.discovery.v3.Resource::getName).toList());
    delta.close();
  }

  @Test
  void configDumpNeverShowsSecretContents() throws Exception {
    f.reload(GROUPED);
    String body = f.get("/config_dump").body();
    assertThat(body).doesNotContain("TOP-SECRET-KEY");
    JsonObject sds = f.getJson("/config_dump?group=gateways&type=secrets").getAsJsonArray("groups")
        .get(0).getAsJsonObject().getAsJsonArray("types").get(0).getAsJsonObject()
        .getAsJsonArray("resources").get(0).getAsJsonObject();
    assertThat(sds.get("name").getAsString()).isEqualTo("gw-cert");
    assertThat(sds.get("redacted").getAsBoolean()).isTrue();
    assertThat(sds.getAsJsonObject("resource").keySet()).containsExactly("@type", "name");
  }

  @Test
  void configDumpServesResourcesAsProto3JsonPerGroupAndType() throws Exception {
    JsonObject all = f.getJson("/config_dump");
    JsonArray groups = all.getAsJsonArray("groups");
    assertThat(groups).hasSize(1);
    JsonObject g = groups.get(0).getAsJsonObject();
    assertThat(g.get("name").getAsString()).isEqualTo("default");
    assertThat(g.getAsJsonArray("types")).hasSize(3); // CDS, EDS, LDS: empty types are left out

    JsonObject cds = f.getJson("/config_dump?group=default&type=CDS")
        .getAsJsonArray("groups").get(0).getAsJsonObject().getAsJsonArray("types").get(0)
        .getAsJsonObject();
    assertThat(cds.get("type_url").getAsString()).isEqualTo(CDS);
    assertThat(cds.get("version").getAsString())
        .isEqualTo(f.server.hub().current().defaults().get(dev.meridian.xds.ResourceType.CLUSTER).version());
    JsonObject r = cds.getAsJsonArray("resources").get(0).getAsJsonObject();
    assertThat(r.get("name").getAsString()).isEqualTo("greeter-v1");
    assertThat(r.get("version").getAsString()).isNotEmpty();
    assertThat(r.getAsJsonObject("resource").get("@type").getAsString()).isEqualTo(CDS);
    assertThat(r.getAsJsonObject("resource").get("connect_timeout").getAsString()).isEqualTo("1s");

    assertThat(f.get("/config_dump?group=nope").statusCode()).isEqualTo(404);
    assertThat(f.get("/config_dump?type=bogus").statusCode()).isEqualTo(400);
  }

  @Test
  void metricsCountStreamsRequestsAcksNacksReloadsAndPushLatency() throws Exception {
    RawXdsClient.Sotw envoy = f.ads("envoy-c", "edge");
    envoy.ack(envoy.subscribe(CLUSTER));
    DiscoveryResponse lds = envoy.subscribe(LISTENER);
    envoy.nack(lds, "", "no");
    await("nack counted", () -> metric("meridian_nacks_total{type=\"LDS\"}") == 1);
    f.reload(OpsFixture.config("3s"));
    envoy.ack(envoy.take(CLUSTER));
    await("push latency observed",
        () -> metric("meridian_push_latency_seconds_count{type=\"CDS\"}") == 1);

    String text = f.get("/metrics").body();
    assertThat(f.get("/metrics").headers().firstValue("Content-Type").orElseThrow())
        .startsWith("text/plain; version=0.0.4");
    assertThat(metric(text, "meridian_streams_connected{service=\"ads\",variant=\"sotw\"}"))
        .isEqualTo(1);
    assertThat(metric(text, "meridian_streams_by_type{type=\"CDS\",variant=\"sotw\"}"))
        .isEqualTo(1);
    assertThat(metric(text, "meridian_streams_by_type{type=\"LDS\",variant=\"sotw\"}"))
        .isEqualTo(1);
    assertThat(metric(text, "meridian_streams_opened_total{variant=\"sotw\"}")).isEqualTo(1);
    assertThat(metric(text, "meridian_requests_total{type=\"CDS\"}")).isEqualTo(3);
    assertThat(metric(text, "meridian_responses_total{type=\"CDS\"}")).isEqualTo(2);
    assertThat(metric(text, "meridian_acks_total{type=\"CDS\"}")).isEqualTo(2);
    assertThat(metric(text, "meridian_response_bytes_total{type=\"CDS\"}")).isPositive();
    assertThat(metric(text, "meridian_config_reloads_total{result=\"ok\"}")).isEqualTo(2);
    assertThat(metric(text, "meridian_config_reloads_total{result=\"failed\"}")).isZero();
    assertThat(metric(text, "meridian_resources{group=\"default\",type=\"CDS\"}")).isEqualTo(2);
    assertThat(metric(text, "meridian_push_latency_seconds_bucket{type=\"CDS\",le=\"+Inf\"}"))
        .isEqualTo(1);

    java.nio.file.Files.writeString(f.file, "resources: [ {");
    await("failed reload counted",
        () -> metric("meridian_config_reloads_total{result=\"failed\"}") == 1);
    envoy.close();
    await("stream gone from the gauges",
        () -> !get("/metrics").contains("meridian_streams_connected{")
            && metric("meridian_streams_by_type{type=\"CDS\",variant=\"sotw\"}") == 0);
  }

  // Issue 24: the Prometheus Java client's writers; OpenMetrics when the scraper asks for it.
  @Test
  void metricsAreOpenMetricsWhenTheScraperAsksAndPrometheusTextOtherwise() throws Exception {
    java.net.http.HttpResponse<String> om = f.http.send(java.net.http.HttpRequest.newBuilder(
            java.net.URI.create("http://127.0.0.1:" + f.server.httpPort() + "/metrics"))
        .header("Accept", "application/openmetrics-text; version=1.0.0; charset=utf-8,"
            + "text/plain;version=0.0.4;q=0.5,*/*;q=0.1").build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertThat(om.statusCode()).isEqualTo(200);
    assertThat(om.headers().firstValue("Content-Type").orElseThrow())
        .startsWith("application/openmetrics-text");
    assertThat(om.body()).endsWith("# EOF\n")
        .contains("# TYPE meridian_requests counter")
        .contains("meridian_requests_total{type=\"CDS\"} 0")
        .contains("meridian_resources{group=\"default\",type=\"CDS\"} 2");

    java.net.http.HttpResponse<String> text = f.get("/metrics");
    assertThat(text.headers().firstValue("Content-Type").orElseThrow())
        .startsWith("text/plain; version=0.0.4");
    assertThat(text.body()).doesNotContain("# EOF")
        .contains("# TYPE meridian_requests_total counter");
  }

  @Test
  void metricsIncludeTheJvmAndTheProcess() throws Exception {
    String text = get("/metrics");
    assertThat(metric(text, "jvm_memory_used_bytes{area=\"heap\"}")).isPositive();
    assertThat(text).contains("jvm_threads_current ").contains("jvm_gc_collection_seconds_count")
        .contains("process_cpu_seconds_total ");
    // Meridian's own are no store gauges without a store (a config file here)
    assertThat(text).doesNotContain("meridian_store_connected ");
  }

  @Test
  void metricsCountEachResourceVersionSerializedOnceHoweverManyClientsReceiveIt() throws Exception {
    // The fixture's config: 4 resources, each built and serialized by the first load.
    assertThat(metric("meridian_resources_serialized_total")).isEqualTo(4);
    java.util.List<RawXdsClient.Sotw> clients = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      RawXdsClient.Sotw c = f.ads("envoy-" + i, "edge");
      c.ack(c.subscribe(CLUSTER));
      clients.add(c);
    }
    assertThat(metric("meridian_resources_serialized_total")).isEqualTo(4);
    // One cluster changed: that one resource is built anew; the others are reused.
    f.reload(OpsFixture.config("3s"));
    for (RawXdsClient.Sotw c : clients) {
      c.ack(c.take(CLUSTER));
    }
    assertThat(metric("meridian_resources_serialized_total")).isEqualTo(5);
    clients.forEach(RawXdsClient::close);
  }

  private String get(String path) {
    try {
      return f.get(path).body();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private double metric(String series) {
    return metric(get("/metrics"), series);
  }

  static double metric(String text, String series) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(text);
    return m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
  }

  private int count() {
    try {
      return f.getJson("/clients").get("count").getAsInt();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private JsonObject awaitClients(java.util.function.Predicate<JsonObject> firstClient) {
    JsonObject[] last = new JsonObject[1];
    await("/clients condition", () -> {
      try {
        last[0] = f.getJson("/clients");
        JsonArray cs = last[0].getAsJsonArray("clients");
        return cs.size() > 0 && firstClient.test(cs.get(0).getAsJsonObject());
      } catch (AssertionError e) {
        return false; // a type not requested yet
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    });
    return last[0];
  }

  private static java.util.List<String> names(JsonArray a) {
    java.util.List<String> out = new java.util.ArrayList<>();
    a.forEach(e -> out.add(e.getAsString()));
    return out;
  }
}
