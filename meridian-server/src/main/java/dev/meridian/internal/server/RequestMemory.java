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
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger("dev.meridian.server");
  private final long max;
  private final AtomicLong held = new AtomicLong();
  /** The refusals are logged once a minute: the operator sees the bound reached, not a flood. */
  private final LogGate refusals = new LogGate(java.time.Clock.systemUTC(),
      java.time.Duration.ofMinutes(1));

  RequestMemory(long max) {
    this.max = max;
  }

  /** Takes {@code bytes} of the bound; false (nothing taken) when they do not fit. */
  boolean reserve(long bytes) {
    long now = held.addAndGet(bytes);
    if (now > max && now != bytes) {
      held.addAndGet(-bytes);
      if (refusals.open("request_memory")) {
        LOG.warn(dev.meridian.internal.protocol.LogLine.of("request_memory_full")
            .kv("held", now - bytes).kv("max", max).kv("refused_bytes", bytes)
            .kv("flag", "--max-request-memory").toString());
      }
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
