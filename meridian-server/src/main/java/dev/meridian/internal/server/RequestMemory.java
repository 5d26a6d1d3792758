package dev.meridian.internal.server;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The encoded bytes of the requests a server holds at once, read and not yet answered, over every
 * stream and REST-JSON poll ({@code --max-request-memory}). Each bound on one client (request
 * size, names, rate) leaves many clients free to send their largest requests together: twelve of
 * 12 MiB once took a 1.2 GB heap. A request that would take the total past the bound is refused
 * (the client retries); one alone is always taken, since the bound holds at least one of the
 * largest size.
 */
final class RequestMemory {
  private final long max;
  private final AtomicLong held = new AtomicLong();

  RequestMemory(long max) {
    this.max = max;
  }

  /** Takes {@code bytes} of the bound; false (nothing taken) when they do not fit. */
  boolean reserve(long bytes) {
    long now = held.addAndGet(bytes);
    if (now > max && now != bytes) {
      held.addAndGet(-bytes);
      return false;
    }
    return true;
  }

  void release(long bytes) {
    held.addAndGet(-bytes);
  }

  /** Bytes held now. */
  long held() {
    return held.get();
  }

  long max() {
    return max;
  }

  /** Why a request was refused, for the client. */
  String refusal(long bytes) {
    return "the server holds " + held.get() + " bytes of requests being handled and a request of "
        + bytes + " bytes would pass its bound of " + max + " (--max-request-memory); retry";
  }
}
