package dev.meridian.internal.server;

import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Server counters, exposed as Prometheus text (exposition format 0.0.4) on {@code /metrics}. Written
 * by hand to keep the server free of a metrics library; the names are documented in
 * docs/operations.md and are a contract.
 */
public final class Metrics {
  /**
   * Push latency buckets, seconds: from a config change reaching a stream to the client's ACK.
   * A new array for each histogram: an array is mutable, so none is shared between servers.
   */
  static double[] latencyBuckets() {
    return new double[] {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  }

  private final Map<ResourceType, LongAdder> requests = adders();
  private final Map<ResourceType, LongAdder> responses = adders();
  private final Map<ResourceType, LongAdder> acks = adders();
  private final Map<ResourceType, LongAdder> nacks = adders();
  private final Map<ResourceType, LongAdder> bytes = adders();
  private final Map<ResourceType, Histogram> pushLatency = new EnumMap<>(ResourceType.class);
  private final LongAdder reloadsOk = new LongAdder();
  private final LongAdder reloadsFailed = new LongAdder();
  /** Streams handed a config change, summed over changes (the fan-out index's work). */
  private final LongAdder pushedTo = new LongAdder();
  private final LongAdder streamsDenied = new LongAdder();
  private final LongAdder tlsReloadsOk = new LongAdder();
  private final LongAdder tlsReloadsFailed = new LongAdder();
  private final LongAdder secretsWithheld = new LongAdder();
  private final Map<String, LongAdder> streamsOpened = new java.util.concurrent.ConcurrentHashMap<>();
  /** variant + NUL + type abbreviation → connected streams that have requested that type. */
  private final Map<String, LongAdder> streamsByType = new java.util.concurrent.ConcurrentHashMap<>();
  /** Resources serialized so far, as counted by whoever builds them (the config loader). */
  private volatile LongSupplier resourcesSerialized = () -> 0;

  public Metrics() {
    for (ResourceType t : ResourceType.values()) {
      pushLatency.put(t, new Histogram());
    }
  }

  private static Map<ResourceType, LongAdder> adders() {
    Map<ResourceType, LongAdder> m = new EnumMap<>(ResourceType.class);
    for (ResourceType t : ResourceType.values()) {
      m.put(t, new LongAdder());
    }
    return m;
  }

  public void request(ResourceType type) {
    requests.get(type).increment();
  }

  public void response(ResourceType type, int serializedBytes) {
    responses.get(type).increment();
    bytes.get(type).add(serializedBytes);
  }

  public void ack(ResourceType type) {
    acks.get(type).increment();
  }

  public void nack(ResourceType type) {
    nacks.get(type).increment();
  }

  public void pushLatency(ResourceType type, long nanos) {
    pushLatency.get(type).observe(nanos / 1e9);
  }

  /** A stream was refused: its node claimed a group its identity may not have (issue 20). */
  void streamDenied() {
    streamsDenied.increment();
  }

  /** A Secret a stream asked for was withheld from it (issue 20). */
  void secretWithheld() {
    secretsWithheld.increment();
  }

  /** Changed TLS files were re-read: {@code ok}, or refused (the previous stay in use). */
  void tlsReload(boolean ok) {
    (ok ? tlsReloadsOk : tlsReloadsFailed).increment();
  }

  public void reload(boolean ok) {
    (ok ? reloadsOk : reloadsFailed).increment();
  }

  /** A config change was handed to {@code streams} streams. */
  void pushedTo(int streams) {
    pushedTo.add(streams);
  }

  long pushedTo() {
    return pushedTo.sum();
  }

  public void streamOpened(String variant) {
    streamsOpened.computeIfAbsent(variant, v -> new LongAdder()).increment();
  }

  /** A stream of {@code variant} requested {@code type} for the first time. */
  public void typeRequested(String variant, ResourceType type) {
    streamsByType.computeIfAbsent(variant + "\u0000" + type.abbreviation(), k -> new LongAdder())
        .increment();
  }

  /** A stream that had requested {@code type} closed. */
  public void typeReleased(String variant, ResourceType type) {
    streamsByType.computeIfAbsent(variant + "\u0000" + type.abbreviation(), k -> new LongAdder())
        .decrement();
  }

  /**
   * Where {@code meridian_resources_serialized_total} comes from: the count of resources built
   * (each serialized once) by what produces the served configs, read when the metrics are
   * rendered. {@link MeridianServer} sets its config loader's.
   */
  void resourcesSerializedBy(LongSupplier counter) {
    this.resourcesSerialized = counter;
  }

  /** The config store's state (etcd), rendered as gauges; null when the config is a file. */
  private volatile java.util.function.Supplier<dev.meridian.internal.config.ConfigSource.Status> store;

  void storeStatusBy(java.util.function.Supplier<dev.meridian.internal.config.ConfigSource.Status> s) {
    this.store = s;
  }

  /** Renders every family; gauges are computed now from the registry and the served config. */
  public String render(StreamRegistry registry, ServedConfig config) {
    StringBuilder sb = new StringBuilder(4096);
    Map<String, Integer> connected = new TreeMap<>();
    for (ConnectedStream s : registry.streams()) {
      StreamInfo i = s.info();
      connected.merge(i.variant() + "\u0000" + i.service(), 1, Integer::sum);
    }
    header(sb, "meridian_streams_connected", "gauge",
        "Connected xDS streams by protocol variant (sotw, delta) and service (ads or a type).");
    for (Map.Entry<String, Integer> e : connected.entrySet()) {
      String[] k = e.getKey().split("\u0000");
      sb.append("meridian_streams_connected{variant=\"").append(k[0]).append("\",service=\"")
          .append(k[1]).append("\"} ").append(e.getValue()).append('\n');
    }
    header(sb, "meridian_streams_by_type", "gauge",
        "Connected xDS streams that have requested each type (an ADS stream counts once per type).");
    new TreeMap<>(streamsByType).forEach((k, n) -> {
      String[] kv = k.split("\u0000");
      sb.append("meridian_streams_by_type{variant=\"").append(kv[0]).append("\",type=\"")
          .append(kv[1]).append("\"} ").append(n.sum()).append('\n');
    });
    header(sb, "meridian_streams_opened_total", "counter", "xDS streams opened, by variant.");
    new TreeMap<>(streamsOpened).forEach((v, n) -> sb.append("meridian_streams_opened_total{variant=\"")
        .append(v).append("\"} ").append(n.sum()).append('\n'));
    header(sb, "meridian_streams_denied_total", "counter",
        "Streams refused with PERMISSION_DENIED: the node claimed a group whose identity rule "
            + "its client certificate does not meet (docs/security.md).");
    sb.append("meridian_streams_denied_total ").append(streamsDenied.sum()).append('\n');
    header(sb, "meridian_secrets_withheld_total", "counter",
        "Secrets a stream asked for and may not have (no verified identity, or not its owner), "
            + "counted once per stream and Secret.");
    sb.append("meridian_secrets_withheld_total ").append(secretsWithheld.sum()).append('\n');
    header(sb, "meridian_tls_reloads_total", "counter",
        "Changed TLS files re-read, by result (ok; failed: the previous material stays in use).");
    sb.append("meridian_tls_reloads_total{result=\"ok\"} ").append(tlsReloadsOk.sum()).append('\n');
    sb.append("meridian_tls_reloads_total{result=\"failed\"} ").append(tlsReloadsFailed.sum())
        .append('\n');
    perType(sb, "meridian_requests_total", "Discovery requests received, by type.", requests);
    perType(sb, "meridian_responses_total", "Discovery responses sent, by type.", responses);
    perType(sb, "meridian_response_bytes_total", "Serialized bytes of responses sent, by type.",
        bytes);
    perType(sb, "meridian_acks_total", "Responses the clients accepted (ACK), by type.", acks);
    perType(sb, "meridian_nacks_total", "Responses the clients rejected (NACK), by type.", nacks);
    header(sb, "meridian_config_reloads_total", "counter",
        "Config loads and reloads, by result (ok, failed).");
    sb.append("meridian_config_reloads_total{result=\"ok\"} ").append(reloadsOk.sum()).append('\n');
    sb.append("meridian_config_reloads_total{result=\"failed\"} ").append(reloadsFailed.sum())
        .append('\n');
    header(sb, "meridian_config_push_streams_total", "counter",
        "Streams handed a config change, summed over changes: only the streams a change concerns.");
    sb.append("meridian_config_push_streams_total ").append(pushedTo.sum()).append('\n');
    header(sb, "meridian_resources_serialized_total", "counter",
        "Resources built and serialized by config loads: once per new or changed resource, "
            + "however many clients receive it.");
    sb.append("meridian_resources_serialized_total ").append(resourcesSerialized.getAsLong())
        .append('\n');
    header(sb, "meridian_push_latency_seconds", "histogram",
        "From a config change reaching a stream to the client's ACK of the response it caused.");
    pushLatency.forEach((t, h) -> h.render(sb, "meridian_push_latency_seconds",
        "type=\"" + t.abbreviation() + "\""));
    java.util.function.Supplier<dev.meridian.internal.config.ConfigSource.Status> storeStatus = store;
    if (storeStatus != null) {
      dev.meridian.internal.config.ConfigSource.Status st = storeStatus.get();
      header(sb, "meridian_store_connected", "gauge",
          "1 while the config store (etcd) answers; 0 while it is unreachable (the last config "
              + "is served meanwhile).");
      sb.append("meridian_store_connected ").append(st.connected() ? 1 : 0).append('\n');
      header(sb, "meridian_store_revision", "gauge",
          "The store revision of the config in force (0 before the first load).");
      sb.append("meridian_store_revision ").append(st.revision()).append('\n');
    }
    header(sb, "meridian_resources", "gauge", "Resources served, by config group and type.");
    for (String group : config.groupNames()) {
      for (ResourceType t : ResourceType.values()) {
        sb.append("meridian_resources{group=\"").append(escape(group)).append("\",type=\"")
            .append(t.abbreviation()).append("\"} ").append(config.snapshot(group).get(t).size())
            .append('\n');
      }
    }
    return sb.toString();
  }

  private static void perType(StringBuilder sb, String name, String help,
      Map<ResourceType, LongAdder> values) {
    header(sb, name, "counter", help);
    values.forEach((t, v) -> sb.append(name).append("{type=\"").append(t.abbreviation())
        .append("\"} ").append(v.sum()).append('\n'));
  }

  private static void header(StringBuilder sb, String name, String type, String help) {
    sb.append("# HELP ").append(name).append(' ').append(help).append('\n');
    sb.append("# TYPE ").append(name).append(' ').append(type).append('\n');
  }

  static String escape(String label) {
    return label.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }

  /** A fixed-bucket histogram; observations are lock-free. */
  static final class Histogram {
    private final double[] bounds = latencyBuckets();
    private final AtomicLongArray buckets = new AtomicLongArray(bounds.length);
    private final LongAdder count = new LongAdder();
    private final java.util.concurrent.atomic.DoubleAdder sum =
        new java.util.concurrent.atomic.DoubleAdder();

    void observe(double seconds) {
      for (int i = 0; i < bounds.length; i++) {
        if (seconds <= bounds[i]) {
          buckets.incrementAndGet(i);
          break;
        }
      }
      count.increment();
      sum.add(seconds);
    }

    long count() {
      return count.sum();
    }

    void render(StringBuilder sb, String name, String labels) {
      long cumulative = 0;
      for (int i = 0; i < bounds.length; i++) {
        cumulative += buckets.get(i);
        sb.append(name).append("_bucket{").append(labels).append(",le=\"")
            .append(bounds[i]).append("\"} ").append(cumulative).append('\n');
      }
      sb.append(name).append("_bucket{").append(labels).append(",le=\"+Inf\"} ")
          .append(count.sum()).append('\n');
      sb.append(name).append("_sum{").append(labels).append("} ").append(sum.sum()).append('\n');
      sb.append(name).append("_count{").append(labels).append("} ").append(count.sum())
          .append('\n');
    }
  }
}
