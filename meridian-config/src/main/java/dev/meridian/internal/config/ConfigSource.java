package dev.meridian.internal.config;

import java.time.Instant;

/**
 * A config held somewhere other than a local file (etcd; the embedding API later): it delivers
 * every new config to a {@link Sink}, in order, from its own thread, and says how it is doing.
 * The server serves the last config a sink accepted whatever the source's state.
 */
public interface ConfigSource extends AutoCloseable {
  /** Where the config comes from, for logs and status, e.g. {@code etcd://host:2379/meridian}. */
  String describe();

  /** Starts delivering configs to {@code sink}; returns at once (the first may come later). */
  void start(Sink sink);

  /** The source's state now. Thread-safe. */
  Status status();

  /** Resources the source's loads have built and serialized ({@link ConfigLoader#resourcesSerialized}). */
  long resourcesSerialized();

  @Override
  void close();

  /** Receives configs, on the source's thread, one at a time. */
  interface Sink {
    /**
     * Puts a loaded config in force, or rejects it by throwing: the last good one stays.
     * {@code revision} is the store's revision of it.
     */
    void apply(ConfigLoader.Loaded loaded, long revision) throws ConfigException;

    /**
     * The source holds a config that cannot be loaded, or that {@link #apply} refused or held
     * ({@link ConfigHeld}); the last good one stays.
     */
    void failed(ConfigException problems);

    /**
     * After a failure, the source holds the config in force again (at {@code revision}): nothing
     * to apply, but the failure is over.
     */
    default void recovered(long revision) {}
  }

  /**
   * @param connected whether the store answers now
   * @param revision the store revision of the config in force (0 before the first load)
   * @param loaded whether any config has been loaded
   * @param detail why the store is unreachable or its config is not served; null when all is well
   * @param since when {@code connected} last changed
   */
  record Status(boolean connected, long revision, boolean loaded, String detail, Instant since) {}
}
