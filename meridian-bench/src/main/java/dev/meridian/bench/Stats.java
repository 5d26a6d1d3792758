package dev.meridian.bench;

import java.util.Arrays;

/** Percentiles by the nearest-rank method over a copy of the samples. */
public final class Stats {
  private final double[] sorted;

  public Stats(double[] samples) {
    this.sorted = samples.clone();
    Arrays.sort(sorted);
  }

  public int count() {
    return sorted.length;
  }

  /** Nearest rank: the smallest sample with at least p% of the samples at or below it. */
  public double percentile(double p) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    if (p <= 0) {
      return sorted[0];
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
  }

  public double min() {
    return percentile(0);
  }

  public double max() {
    return percentile(100);
  }

  public double mean() {
    return sorted.length == 0 ? Double.NaN : Arrays.stream(sorted).sum() / sorted.length;
  }
}
