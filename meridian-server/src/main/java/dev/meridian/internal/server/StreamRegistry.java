package dev.meridian.internal.server;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/** Every connected xDS stream, of any variant, by id. Thread-safe. */
public final class StreamRegistry {
  /** How long a status query waits for a busy stream before leaving it out. */
  static final Duration STATUS_TIMEOUT = Duration.ofSeconds(2);

  private final AtomicLong ids = new AtomicLong();
  private final Map<Long, ConnectedStream> streams = new ConcurrentSkipListMap<>();

  public long nextId() {
    return ids.incrementAndGet();
  }

  public void register(ConnectedStream stream) {
    streams.put(stream.info().id(), stream);
  }

  public void unregister(ConnectedStream stream) {
    streams.remove(stream.info().id(), stream);
  }

  public List<ConnectedStream> streams() {
    return new ArrayList<>(streams.values());
  }

  public int size() {
    return streams.size();
  }

  /**
   * The status of every stream, in id order. Each is taken on its stream's executor; a stream that
   * does not answer within {@link #STATUS_TIMEOUT} (or closed meanwhile) is left out.
   */
  public CompletableFuture<List<ClientStatus>> statuses() {
    List<CompletableFuture<ClientStatus>> futures = new ArrayList<>();
    for (ConnectedStream s : streams.values()) {
      futures.add(s.status().completeOnTimeout(null, STATUS_TIMEOUT.toMillis(),
          TimeUnit.MILLISECONDS).exceptionally(t -> null));
    }
    return CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).thenApply(v -> {
      List<ClientStatus> out = new ArrayList<>();
      for (CompletableFuture<ClientStatus> f : futures) {
        ClientStatus s = f.join();
        if (s != null) {
          out.add(s);
        }
      }
      out.sort(Comparator.comparingLong(s -> s.stream().id()));
      return out;
    });
  }
}
