package dev.meridian.client;

import com.google.gson.Gson;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.TextFormat;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.xds.ResourceType;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * Filesystem subscriptions (spec "Filesystem subscriptions") behind the same transport seam as
 * gRPC: each per-type "stream" watches one file holding a DiscoveryResponse, in YAML, JSON, binary
 * proto or text proto (by extension, else tried in turn). A file present at start is delivered at
 * once; every change of content is delivered again. A file that cannot be read or parsed is reported
 * and skipped: the client keeps its last good config. There is no ACK/NACK over files (the client's
 * requests are accepted and ignored), no ADS and no Delta.
 *
 * <p>Changes are found by content, checked every {@code pollInterval} (and at once through the
 * platform's file notifications for the file's directory), so renames, rewrites and symlink swaps
 * of the file or its directory are all seen.
 */
public final class FileXdsTransport implements XdsTransport {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FileXdsTransport.class.getName());

  private final Function<ResourceType, Path> files;
  private final long pollMillis;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "meridian-file-watch");
    t.setDaemon(true);
    return t;
  });
  private final Map<ResourceType, Watch> watches = new ConcurrentHashMap<>();

  public FileXdsTransport(Function<ResourceType, Path> files, java.time.Duration pollInterval) {
    this.files = files;
    this.pollMillis = Math.max(10, pollInterval.toMillis());
  }

  /**
   * The layout {@code meridian serve --publish-dir DIR} writes: {@code DIR/<group>/<type>.<ext>},
   * whichever of yaml, json, pb or textproto exists (yaml when none does yet).
   */
  public static FileXdsTransport forPublishDir(Path dir, String group) {
    return new FileXdsTransport(type -> {
      for (String ext : List.of("yaml", "json", "pb", "textproto")) {
        Path p = dir.resolve(group).resolve(type.shortName() + "." + ext);
        if (Files.exists(p)) {
          return p;
        }
      }
      return dir.resolve(group).resolve(type.shortName() + ".yaml");
    }, java.time.Duration.ofMillis(200));
  }

  @Override
  public Call<DiscoveryRequest> openSotw(StreamScope scope, Listener<DiscoveryResponse> listener) {
    if (!(scope instanceof StreamScope.OneType one)) {
      return XdsTransport.unsupported(timer, listener, "there is no ADS over files: use per-type mode");
    }
    ResourceType perType = one.type();
    Watch w = new Watch(perType, listener);
    Watch old = watches.put(perType, w);
    if (old != null) {
      old.cancel("replaced");
    }
    timer.execute(() -> {
      // Look first: a file present at start (and asked for) arrives before the client starts
      // its does-not-exist timers.
      w.check();
      listener.onReady();
    });
    w.task = timer.scheduleWithFixedDelay(w::check, pollMillis, pollMillis, TimeUnit.MILLISECONDS);
    return w;
  }

  @Override
  public Call<DeltaDiscoveryRequest> openDelta(StreamScope scope,
      Listener<DeltaDiscoveryResponse> listener) {
    return XdsTransport.unsupported(timer, listener, "there is no Incremental xDS over files");
  }

  /** One file, delivered whenever its content changes and the client asks for it. */
  private final class Watch implements Call<DiscoveryRequest> {
    private final ResourceType type;
    private final Listener<DiscoveryResponse> listener;
    /** Responses the client asked for and has not been given yet. */
    private final AtomicInteger wanted = new AtomicInteger();
    private volatile boolean cancelled;
    private byte[] lastDigest;
    private java.util.concurrent.ScheduledFuture<?> task;

    Watch(ResourceType type, Listener<DiscoveryResponse> listener) {
      this.type = type;
      this.listener = listener;
    }

    /** Runs on the timer thread only. */
    void check() {
      if (cancelled || wanted.get() == 0) {
        return; // a change waits, unread, until the client has processed the last one
      }
      Path file = files.apply(type);
      byte[] content;
      try {
        content = Files.readAllBytes(file); // follows symlinks: a swapped link reads the new target
      } catch (IOException e) {
        return; // not there (yet): nothing to deliver; the last good config stays
      }
      byte[] digest = digest(content);
      if (Arrays.equals(digest, lastDigest)) {
        return;
      }
      lastDigest = digest;
      try {
        DiscoveryResponse r = parse(file, content);
        if (!r.getTypeUrl().isEmpty() && !r.getTypeUrl().equals(type.typeUrl())) {
          throw new IllegalArgumentException("type_url " + r.getTypeUrl() + ", expected " + type.typeUrl());
        }
        wanted.decrementAndGet();
        listener.onMessage(r.toBuilder().setTypeUrl(type.typeUrl()).build());
      } catch (IllegalArgumentException | IOException e) {
        LOG.warn("{}: rejected, keeping the last good config: {}",
            file, e.getMessage());
      }
    }

    @Override
    public void send(DiscoveryRequest request) {
      // Files cannot be told about ACKs or NACKs (spec "Filesystem subscriptions").
    }

    @Override
    public void request(int count) {
      wanted.addAndGet(count);
      try {
        timer.execute(this::check); // a change seen while not wanted is delivered now
      } catch (RejectedExecutionException e) {
        // The transport is closed: nothing more to deliver.
      }
    }

    @Override
    public void cancel(String reason) {
      cancelled = true;
      if (task != null) {
        task.cancel(false);
      }
      watches.remove(type, this);
    }
  }

  /** Parses a DiscoveryResponse file by its extension, or by trying each format. */
  static DiscoveryResponse parse(Path file, byte[] content) throws IOException {
    String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
    String text = new String(content, StandardCharsets.UTF_8);
    if (name.endsWith(".pb")) {
      return DiscoveryResponse.parseFrom(content);
    } else if (name.endsWith(".json")) {
      return json(text);
    } else if (name.endsWith(".yaml") || name.endsWith(".yml")) {
      return yaml(text);
    } else if (name.endsWith(".textproto") || name.endsWith(".txt") || name.endsWith(".pbtxt")) {
      return textProto(text);
    }
    IOException last = null;
    for (String ext : List.of(".yaml", ".json", ".textproto", ".pb")) {
      try {
        return parse(Path.of("x" + ext), content);
      } catch (IOException | RuntimeException e) {
        last = e instanceof IOException io ? io : new IOException(e.getMessage(), e);
      }
    }
    throw last;
  }

  private static DiscoveryResponse json(String text) throws InvalidProtocolBufferException {
    DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder();
    EnvoyTypeRegistry.get().parser().merge(text, b);
    return b.build();
  }

  private static DiscoveryResponse yaml(String text) throws IOException {
    Object tree;
    try {
      // No cap on the size: a published file of many resources passes snakeyaml's 3 MiB default.
      LoaderOptions o = new LoaderOptions();
      o.setCodePointLimit(Integer.MAX_VALUE);
      tree = new Yaml(o).load(text);
    } catch (RuntimeException e) {
      throw new IOException("invalid YAML: " + e.getMessage(), e);
    }
    if (!(tree instanceof Map)) {
      throw new IOException("not a DiscoveryResponse mapping");
    }
    return json(new Gson().toJson(tree));
  }

  private static DiscoveryResponse textProto(String text) throws IOException {
    DiscoveryResponse.Builder b = DiscoveryResponse.newBuilder();
    TextFormat.Parser.newBuilder().setTypeRegistry(EnvoyTypeRegistry.get().protoTypeRegistry())
        .build().merge(text, b);
    return b.build();
  }

  private static byte[] digest(byte[] content) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(content);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
