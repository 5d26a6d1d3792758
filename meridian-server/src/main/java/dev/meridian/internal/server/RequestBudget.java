package dev.meridian.internal.server;

/**
 * A token bucket of one stream's requests ({@code --max-request-rate}): {@code rate} tokens a
 * second, at most ten seconds' worth saved up; each response the server sends adds one, since the
 * client owes it an ACK. A request without a token closes the stream RESOURCE_EXHAUSTED. Used on
 * the stream's serial executor only.
 */
final class RequestBudget {
  /** How many seconds of the rate a stream may spend at once (a reconnect's burst). */
  static final int BURST_SECONDS = 10;
  private final double rate;
  private final double burst;
  private double tokens;
  private long refilled;

  RequestBudget(int ratePerSecond, long nowNanos) {
    this.rate = ratePerSecond / 1e9;
    this.burst = (double) ratePerSecond * BURST_SECONDS;
    this.tokens = burst;
    this.refilled = nowNanos;
  }

  /** Takes a token for a request; false: the stream is over its rate. */
  boolean take(long nowNanos) {
    tokens = Math.min(burst, tokens + (nowNanos - refilled) * rate);
    refilled = nowNanos;
    if (tokens < 1) {
      return false;
    }
    tokens -= 1;
    return true;
  }

  /** A response was sent: its ACK is the server's doing, not the client's. */
  void responded() {
    tokens = Math.min(burst + 1, tokens + 1);
  }

  int limit() {
    return (int) (burst / BURST_SECONDS);
  }
}
