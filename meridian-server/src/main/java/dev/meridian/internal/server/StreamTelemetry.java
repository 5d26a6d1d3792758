package dev.meridian.internal.server;

import static dev.meridian.internal.protocol.ClientText.clip;

import dev.meridian.internal.protocol.LogLine;
import dev.meridian.internal.protocol.Nack;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.config.core.v3.Node;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;

/**
 * The operational side of one stream, shared by every transport handler (SotW now, Delta later):
 * its {@link StreamInfo}, metrics, push latency and structured log lines. Not thread-safe: the
 * handler calls it from the stream's serial executor, like the protocol core. What a client chose
 * (node, names, versions, messages, and reasons quoting them) is logged {@link
 * dev.meridian.internal.protocol.ClientText#clip clipped}.
 */
final class StreamTelemetry {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger("dev.meridian.server.xds");

  private final Metrics metrics;
  private final Clock clock;
  final StreamInfo info;
  private boolean announced;
  private final Set<ResourceType> requestedTypes = EnumSet.noneOf(ResourceType.class);
  /** When the latest config change reached this stream (System.nanoTime), 0 if none yet. */
  private long configChangedAt;
  /**
   * Per type (by ordinal): the config change whose response awaits an ACK (push latency), and the
   * last one sent; 0 for none. Primitive arrays: a boxed time per push stored into this long-lived
   * object would be one more card for G1 to refine per stream and push.
   */
  private final long[] pushStartedAt = new long[ResourceType.values().length];
  private final long[] pushedChange = new long[ResourceType.values().length];

  /** Allocates the stream's id; {@code perType} is null on the aggregated service. */
  StreamTelemetry(DiscoveryHub hub, String variant, ResourceType perType, String method,
      Clock clock) {
    this.metrics = hub.metrics();
    this.clock = clock;
    this.info = new StreamInfo(hub.registry().nextId(), variant, StreamInfo.service(perType),
        method, PeerAddress.current(), clock.instant(), PeerAddress.identity());
    metrics.streamOpened(variant);
  }

  /** A request for {@code type} (null: unknown type, which the core rejects). */
  void request(ResourceType type) {
    if (type != null) {
      metrics.request(type);
      if (requestedTypes.add(type)) {
        metrics.typeRequested(info.variant(), type);
      }
    }
  }

  /** A config change reached the stream, {@code at} (System.nanoTime) when the hub published it. */
  void configChanged(long at) {
    configChangedAt = at;
  }

  void sent(ResourceType type, int serializedBytes) {
    metrics.response(type, serializedBytes);
    // The first response of this type since the latest config change carries that change.
    int t = type.ordinal();
    if (configChangedAt != 0 && configChangedAt != pushedChange[t]) {
      pushedChange[t] = configChangedAt;
      pushStartedAt[t] = configChangedAt;
    }
  }

  void acked(ResourceType type, String version) {
    metrics.ack(type);
    long started = pushStartedAt[type.ordinal()];
    if (started != 0) {
      pushStartedAt[type.ordinal()] = 0;
      metrics.pushLatency(type, System.nanoTime() - started);
    }
    LOG.atDebug().log(() -> LogLine.of("ack").kv("stream", info.id())
        .kv("type", type.abbreviation()).kv("version", clip(version)).toString());
  }

  void nacked(Nack nack, String group) {
    metrics.nack(nack.type());
    pushStartedAt[nack.type().ordinal()] = 0;
    LOG.warn(LogLine.of("nack")
        .kv("stream", info.id()).kv("node", clip(nack.nodeId())).kv("group", group)
        .kv("peer", info.peer()).kv("type", nack.type().abbreviation())
        .kv("rejected_version", clip(nack.rejectedVersion()))
        .kv("kept_version", clip(nack.keptVersion())).kv("code", nack.code())
        .kv("message", clip(nack.message())).toString());
  }

  void ignored(ResourceType type, String reason) {
    LOG.atDebug().log(() -> LogLine.of("ignored").kv("stream", info.id())
        .kv("type", type.abbreviation()).kv("reason", clip(reason)).toString());
  }

  /** Logs {@code stream_open} once the node is known (the first request), or at the close. */
  void announce(Node node, String group) {
    if (!announced) {
      announced = true;
      LOG.info(LogLine.of("stream_open").kv("stream", info.id())
          .kv("node", node == null ? null : clip(node.getId()))
          .kv("cluster", node == null ? null : clip(node.getCluster()))
          .kv("group", group).kv("peer", info.peer()).kv("identity", identity())
          .kv("variant", info.variant()).kv("method", info.method()).toString());
    }
  }

  private String identity() {
    return info.identity() == null ? "none" : clip(info.identity());
  }

  /** The node claimed a group its identity may not have: the stream is refused (issue 20). */
  void denied(Node node, String message) {
    metrics.streamDenied();
    LOG.warn(LogLine.of("stream_denied").kv("stream", info.id())
        .kv("node", node == null ? null : clip(node.getId())).kv("identity", identity())
        .kv("peer", info.peer()).kv("reason", clip(message)).toString());
  }

  /** A Secret this stream asks for is withheld from it (issue 20). */
  void withheld(Node node, String group, ResourceType type, String name, String reason) {
    metrics.secretWithheld();
    LOG.warn(LogLine.of("secret_withheld").kv("stream", info.id())
        .kv("node", node == null ? null : clip(node.getId())).kv("group", group)
        .kv("identity", identity()).kv("peer", info.peer()).kv("type", type.abbreviation())
        .kv("name", clip(name)).kv("reason", clip(reason)).toString());
  }

  /** The stream ended; call once. */
  void closed(Node node, String group, String reason) {
    announce(node, group);
    requestedTypes.forEach(t -> metrics.typeReleased(info.variant(), t));
    requestedTypes.clear();
    LOG.info(LogLine.of("stream_close").kv("stream", info.id())
        .kv("node", node == null ? null : clip(node.getId())).kv("peer", info.peer())
        .kv("method", info.method())
        .kv("duration_ms", Duration.between(info.connectedSince(), clock.instant()).toMillis())
        .kv("reason", clip(reason)).toString());
  }
}
