package dev.meridian.internal.server;

import dev.meridian.internal.config.ConfigSource;
import dev.meridian.internal.protocol.ServedConfig;
import dev.meridian.xds.ResourceType;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.instrumentation.jvm.JvmBufferPoolMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmClassLoadingMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmCompilationMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmGarbageCollectorMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmMemoryMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmRuntimeInfoMetric;
import io.prometheus.metrics.instrumentation.jvm.JvmThreadsMetrics;
import io.prometheus.metrics.instrumentation.jvm.ProcessMetrics;
import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Server metrics on the Prometheus Java client (issue 24): {@code /metrics} serves the Prometheus
 * text format, or OpenMetrics when the scraper asks for it. The {@code meridian_*} names are
 * documented in docs/operations.md and are a contract.
 *
 * <p>Each instance has a registry of its own (never the client's default registry): two servers
 * in one JVM are independent. It holds the {@code meridian_*} metrics and the JVM and process
 * metrics; an embedding application may have the {@code meridian_*} metrics registered into its
 * own registry as well ({@link #registerInto}).
 *
 * <p>Counters on the request path are per-type children looked up once, here; incrementing one is
 * lock-free. What is computed from the server's state (connected streams, served resources, the
 * config store) is read by callbacks when scraped, not copied.
 */
public final class Metrics {
  /**
   * Push latency buckets, seconds: from a config change reaching a stream to the client's ACK.
   * A new array for each histogram: an array is mutable, so none is shared between servers.
   */
  static double[] latencyBuckets() {
    return new double[] {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  }

  private final PrometheusRegistry registry = new PrometheusRegistry();
  private final ExpositionFormats formats = ExpositionFormats.init();
  /** The {@code meridian_*} collectors: what an embedder's registry receives. */
  private final List<Collector> own = new ArrayList<>();

  private final Map<ResourceType, CounterDataPoint> requests = new EnumMap<>(ResourceType.class);
  private final Map<ResourceType, CounterDataPoint> responses = new EnumMap<>(ResourceType.class);
  private final Map<ResourceType, CounterDataPoint> acks = new EnumMap<>(ResourceType.class);
  private final Map<ResourceType, CounterDataPoint> nacks = new EnumMap<>(ResourceType.class);
  private final Map<ResourceType, CounterDataPoint> bytes = new EnumMap<>(ResourceType.class);
  private final Map<ResourceType, DistributionDataPoint> pushLatency =
      new EnumMap<>(ResourceType.class);
  private final CounterDataPoint reloadsOk;
  private final CounterDataPoint reloadsFailed;
  private final CounterDataPoint reloadsHeld;
  /** Whether the config source's content is served (see {@link ReloadStatus#state}). */
  private volatile Supplier<ReloadStatus.Result> configState = () -> null;
  private final Counter publishFailures;
  /** Streams handed a config change, summed over changes (the fan-out index's work). */
  private final Counter pushedTo;
  private final Counter streamsDenied;
  private final Counter tlsHandshakeFailures;
  private final CounterDataPoint tlsReloadsOk;
  private final CounterDataPoint tlsReloadsFailed;
  private final Counter secretsWithheld;
  private final Counter boundsRefused;
  private final Counter streamsOpened;
  /** Connected streams that have requested a type, by variant and type abbreviation. */
  private final Gauge streamsByType;
  /** Resources serialized so far, as counted by whoever builds them (the config loader). */
  private volatile LongSupplier resourcesSerialized = () -> 0;
  /** The config store's state (etcd), exposed as gauges; null when the config is a file. */
  private volatile Supplier<ConfigSource.Status> store;

  /** Metrics of a server whose streams are in {@code streams} and whose config is {@code config}. */
  public Metrics(StreamRegistry streams, Supplier<ServedConfig> config) {
    add(GaugeWithCallback.builder().name("meridian_streams_connected")
        .help("Connected xDS streams by protocol variant (sotw, delta) and service (ads or a type).")
        .labelNames("variant", "service")
        .callback(cb -> {
          Map<List<String>, Integer> connected = new TreeMap<>(Metrics::compare);
          for (ConnectedStream s : streams.streams()) {
            StreamInfo i = s.info();
            connected.merge(List.of(i.variant(), i.service()), 1, Integer::sum);
          }
          connected.forEach((k, n) -> cb.call(n, k.get(0), k.get(1)));
        }).build());
    streamsByType = add(Gauge.builder().name("meridian_streams_by_type")
        .help("Connected xDS streams that have requested each type (an ADS stream counts once "
            + "per type).")
        .labelNames("variant", "type").withoutExemplars().build());
    streamsOpened = add(Counter.builder().name("meridian_streams_opened_total")
        .help("xDS streams opened, by variant.").labelNames("variant").withoutExemplars().build());
    streamsDenied = add(Counter.builder().name("meridian_streams_denied_total")
        .help("Streams refused with PERMISSION_DENIED: the node claimed a group whose identity "
            + "rule its client certificate does not meet (docs/security.md).")
        .withoutExemplars().build());
    secretsWithheld = add(Counter.builder().name("meridian_secrets_withheld_total")
        .help("Secrets a stream asked for and may not have (no verified identity, or not its "
            + "owner), counted once per stream and Secret.")
        .withoutExemplars().build());
    boundsRefused = add(Counter.builder().name("meridian_bounds_refused_total")
        .help("Clients stopped by a bound (docs/reliability.md), by bound: max_streams, "
            + "max_streams_per_peer, max_request_rate, max_resource_names, max_request_memory, "
            + "max_connections, max_connections_per_peer, message_receive_timeout, "
            + "max_partial_bytes, max_partial_bytes_per_connection, max_rest_long_polls, "
            + "http_queue, http_request_timeout.")
        .labelNames("bound").withoutExemplars().build());
    Counter tls = add(Counter.builder().name("meridian_tls_reloads_total")
        .help("Changed TLS files re-read, by result (ok; failed: the previous material stays in "
            + "use).")
        .labelNames("result").withoutExemplars().build());
    tlsHandshakeFailures = add(Counter.builder().name("meridian_tls_handshake_failures_total")
        .help("TLS handshakes on the xDS port that failed (each logged as tls_handshake_failed, "
            + "at most once a minute per peer address); connections closed before any TLS error "
            + "are not counted.")
        .withoutExemplars().build());
    tlsReloadsOk = tls.labelValues("ok");
    tlsReloadsFailed = tls.labelValues("failed");
    perType("meridian_requests_total", "Discovery requests received, by type.", requests);
    perType("meridian_responses_total", "Discovery responses sent, by type.", responses);
    perType("meridian_response_bytes_total", "Serialized bytes of responses sent, by type.",
        bytes);
    perType("meridian_acks_total", "Responses the clients accepted (ACK), by type.", acks);
    perType("meridian_nacks_total", "Responses the clients rejected (NACK), by type.", nacks);
    Counter reloads = add(Counter.builder().name("meridian_config_reloads_total")
        .help("Config loads and reloads, by result (ok, failed; held: it would empty what is "
            + "served).")
        .labelNames("result").withoutExemplars().build());
    reloadsOk = reloads.labelValues("ok");
    reloadsFailed = reloads.labelValues("failed");
    reloadsHeld = reloads.labelValues("held");
    add(GaugeWithCallback.builder().name("meridian_config_state")
        .help("1 for the state of the config source's content: ok (it is served), failed or "
            + "held (the last good config is served); no sample before the first load.")
        .labelNames("state")
        .callback(cb -> {
          ReloadStatus.Result now = configState.get();
          if (now != null) {
            for (ReloadStatus.Result r : new ReloadStatus.Result[] {ReloadStatus.Result.OK,
                ReloadStatus.Result.FAILED, ReloadStatus.Result.HELD}) {
              cb.call(r == now ? 1 : 0, r.label());
            }
          }
        }).build());
    publishFailures = add(Counter.builder().name("meridian_publish_failures_total")
        .help("Publishes of --publish-dir files that left a file not current (the files of an "
            + "older config stay while xDS serves the new one).")
        .withoutExemplars().build());
    pushedTo = add(Counter.builder().name("meridian_config_push_streams_total")
        .help("Streams handed a config change, summed over changes: only the streams a change "
            + "concerns.")
        .withoutExemplars().build());
    add(CounterWithCallback.builder().name("meridian_resources_serialized_total")
        .help("Resources built and serialized by config loads: once per new or changed resource, "
            + "however many clients receive it.")
        .callback(cb -> cb.call(resourcesSerialized.getAsLong())).build());
    Histogram latency = add(Histogram.builder().name("meridian_push_latency_seconds")
        .help("From a config change reaching a stream to the client's ACK of the response it "
            + "caused.")
        .labelNames("type").classicOnly().classicUpperBounds(latencyBuckets())
        .withoutExemplars().build());
    for (ResourceType t : ResourceType.values()) {
      pushLatency.put(t, latency.labelValues(t.abbreviation()));
    }
    add(GaugeWithCallback.builder().name("meridian_store_connected")
        .help("1 while the config store (etcd) answers; 0 while it is unreachable (the last "
            + "config is served meanwhile).")
        .callback(cb -> {
          Supplier<ConfigSource.Status> s = store;
          if (s != null) {
            cb.call(s.get().connected() ? 1 : 0);
          }
        }).build());
    add(GaugeWithCallback.builder().name("meridian_store_revision")
        .help("The store revision of the config in force (0 before the first load).")
        .callback(cb -> {
          Supplier<ConfigSource.Status> s = store;
          if (s != null) {
            cb.call(s.get().revision());
          }
        }).build());
    add(GaugeWithCallback.builder().name("meridian_resources")
        .help("Resources served, by config group and type.")
        .labelNames("group", "type")
        .callback(cb -> {
          ServedConfig c = config.get();
          for (String group : c.groupNames()) {
            for (ResourceType t : ResourceType.values()) {
              cb.call(c.snapshot(group).get(t).size(), group, t.abbreviation());
            }
          }
        }).build());
    own.forEach(registry::register);
    // JVM and process metrics, each family registered on its own: JvmMetrics.register keeps every
    // registry it was given in a static set (it would hold each server's registry for the JVM's
    // life). Left out: allocation per pool (GC listeners that are never removed) and native
    // memory (a diagnostic command per scrape).
    JvmThreadsMetrics.builder().register(registry);
    JvmBufferPoolMetrics.builder().register(registry);
    JvmClassLoadingMetrics.builder().register(registry);
    JvmCompilationMetrics.builder().register(registry);
    JvmGarbageCollectorMetrics.builder().register(registry);
    JvmMemoryMetrics.builder().register(registry);
    JvmRuntimeInfoMetric.builder().register(registry);
    ProcessMetrics.builder().register(registry);
  }

  private static int compare(List<String> a, List<String> b) {
    int c = a.get(0).compareTo(b.get(0));
    return c != 0 ? c : a.get(1).compareTo(b.get(1));
  }

  private <C extends Collector> C add(C collector) {
    own.add(collector);
    return collector;
  }

  private void perType(String name, String help, Map<ResourceType, CounterDataPoint> children) {
    Counter c = add(Counter.builder().name(name).help(help).labelNames("type")
        .withoutExemplars().build());
    for (ResourceType t : ResourceType.values()) {
      children.put(t, c.labelValues(t.abbreviation()));
    }
  }

  /** This server's registry: its {@code meridian_*}, JVM and process metrics. */
  public PrometheusRegistry registry() {
    return registry;
  }

  /**
   * Registers the {@code meridian_*} metrics into {@code other} too (an embedding application's
   * registry): they are the same objects, so either registry shows the same values. Nothing is
   * registered if one of the names is taken there (another Meridian, or the application's own
   * metric of that name).
   *
   * @throws IllegalArgumentException naming the metric that is already registered
   */
  public void registerInto(PrometheusRegistry other) {
    List<Collector> done = new ArrayList<>();
    for (Collector c : own) {
      try {
        other.register(c);
        done.add(c);
      } catch (IllegalArgumentException | IllegalStateException e) {
        done.forEach(other::unregister);
        throw new IllegalArgumentException("the metrics registry already has "
            + c.getPrometheusName() + ": two Meridians cannot register into one registry "
            + "(each has the same meridian_* names); give each Meridian a registry of its own ("
            + e.getMessage() + ")", e);
      }
    }
  }

  /** Undoes {@link #registerInto}. */
  public void unregisterFrom(PrometheusRegistry other) {
    own.forEach(other::unregister);
  }

  /** The body and content type of a scrape. */
  public record Exposition(String contentType, byte[] body) {
    public String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  /**
   * This server's metrics in the format {@code accept} (an HTTP Accept header, null: none) asks
   * for: OpenMetrics for {@code application/openmetrics-text}, else the Prometheus text format.
   */
  public Exposition expose(String accept) {
    ExpositionFormatWriter writer = formats.findWriter(accept);
    if (!writer.isAvailable()) { // protobuf asked for: this build has the text formats only
      writer = formats.getPrometheusTextFormatWriter();
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(16384);
    try {
      writer.write(out, registry.scrape());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new Exposition(writer.getContentType(), out.toByteArray());
  }

  /** This server's metrics in the Prometheus text format. */
  public String render() {
    return expose(null).text();
  }

  public void request(ResourceType type) {
    requests.get(type).inc();
  }

  public void response(ResourceType type, int serializedBytes) {
    responses.get(type).inc();
    bytes.get(type).inc(serializedBytes);
  }

  public void ack(ResourceType type) {
    acks.get(type).inc();
  }

  public void nack(ResourceType type) {
    nacks.get(type).inc();
  }

  public void pushLatency(ResourceType type, long nanos) {
    pushLatency.get(type).observe(nanos / 1e9);
  }

  /** A stream was refused: its node claimed a group its identity may not have (issue 20). */
  void streamDenied() {
    streamsDenied.inc();
  }

  /** A bound stopped a client (issue 25): {@code bound} names it. */
  void boundRefused(String bound) {
    boundsRefused.labelValues(bound).inc();
  }

  /** A Secret a stream asked for was withheld from it (issue 20). */
  void secretWithheld() {
    secretsWithheld.inc();
  }

  /** A TLS handshake on the xDS port failed. */
  void tlsHandshakeFailed() {
    tlsHandshakeFailures.inc();
  }

  /** Changed TLS files were re-read: {@code ok}, or refused (the previous stay in use). */
  void tlsReload(boolean ok) {
    (ok ? tlsReloadsOk : tlsReloadsFailed).inc();
  }

  public void reload(boolean ok) {
    (ok ? reloadsOk : reloadsFailed).inc();
  }

  /** A reload was held: it would empty what is served. */
  void reloadHeld() {
    reloadsHeld.inc();
  }

  /** Where {@code meridian_config_state} reads the state from. */
  void configStateBy(Supplier<ReloadStatus.Result> state) {
    this.configState = state;
  }

  /** A publish of files did not bring every file up to date. */
  void publishFailed() {
    publishFailures.inc();
  }

  /** A config change was handed to {@code streams} streams. */
  void pushedTo(int streams) {
    pushedTo.inc(streams);
  }

  long pushedTo() {
    return pushedTo.getLongValue();
  }

  /** A stream opened (once per stream: the label is looked up here). */
  public void streamOpened(String variant) {
    streamsOpened.labelValues(variant).inc();
  }

  /** A stream of {@code variant} requested {@code type} for the first time. */
  public void typeRequested(String variant, ResourceType type) {
    streamsByType.labelValues(variant, type.abbreviation()).inc();
  }

  /** A stream that had requested {@code type} closed. */
  public void typeReleased(String variant, ResourceType type) {
    streamsByType.labelValues(variant, type.abbreviation()).dec();
  }

  /**
   * Where {@code meridian_resources_serialized_total} comes from: the count of resources built
   * (each serialized once) by what produces the served configs, read when the metrics are
   * scraped. {@link MeridianServer} sets its config loader's.
   */
  void resourcesSerializedBy(LongSupplier counter) {
    this.resourcesSerialized = counter;
  }

  void storeStatusBy(Supplier<ConfigSource.Status> s) {
    this.store = s;
  }
}
