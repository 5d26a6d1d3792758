package dev.meridian.client;

/** A registered watch; {@link #cancel} stops its callbacks and may unsubscribe the resource. */
public interface Watch extends AutoCloseable {
  void cancel();

  @Override
  default void close() {
    cancel();
  }
}
