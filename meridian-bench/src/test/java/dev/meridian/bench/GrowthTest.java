package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The growth runner's fits and tables, on small synthetic numbers. */
class GrowthTest {
  private static final double[] CLIENTS = {1000, 5000, 10000, 20000};

  private static double[] map(double[] xs, java.util.function.DoubleUnaryOperator f) {
    return java.util.Arrays.stream(xs).map(f).toArray();
  }

  @Test
  void aLinearSeriesGivesItsSlopeAsTheCostOfOneMore() {
    Growth.Fit f = Growth.fit(CLIENTS, map(CLIENTS, x -> 200 + 0.5 * x));

    assertThat(f.n()).isEqualTo(4);
    assertThat(f.slope()).isCloseTo(0.5, within(1e-9));
    assertThat(f.intercept()).isCloseTo(200, within(1e-6));
    assertThat(f.r2()).isCloseTo(1, within(1e-12));
    assertThat(f.halfRatio()).isCloseTo(1, within(1e-9));
    assertThat(f.worseThanLinear()).isFalse();
    assertThat(f.verdict()).isEqualTo("linear or better");
  }

  @Test
  void aProportionalSeriesHasPowerLawExponentOne() {
    Growth.Fit f = Growth.fit(CLIENTS, map(CLIENTS, x -> 3 * x));

    assertThat(f.exponent()).isCloseTo(1, within(1e-9));
    assertThat(f.worseThanLinear()).isFalse();
  }

  @Test
  void aQuadraticSeriesIsWorseThanLinear() {
    Growth.Fit f = Growth.fit(CLIENTS, map(CLIENTS, x -> x * x / 1000));

    assertThat(f.exponent()).isCloseTo(2, within(1e-9));
    assertThat(f.worseThanLinear()).isTrue();
    assertThat(f.verdict()).startsWith("**worse than linear**: exponent 2.00 > 1.15");
  }

  @Test
  void aMarginalCostThatGrowsBehindALargeFixedCostIsStillWorseThanLinear() {
    // 10 s of fixed cost flattens the power law; the marginal cost still grows fivefold.
    Growth.Fit f = Growth.fit(CLIENTS, map(CLIENTS, x -> 1e7 + x * x / 100));

    assertThat(f.exponent()).isLessThan(Growth.EXPONENT_LIMIT);
    assertThat(f.halfRatio()).isCloseTo(5, within(1e-9)); // (20,000+10,000)/(5,000+1,000)
    assertThat(f.worseThanLinear()).isTrue();
    assertThat(f.verdict()).contains("marginal cost ×5.0 from the first half to the last");
  }

  @Test
  void aSublinearSeriesIsNotFlagged() {
    Growth.Fit f = Growth.fit(CLIENTS, map(CLIENTS, Math::sqrt));

    assertThat(f.exponent()).isCloseTo(0.5, within(1e-9));
    assertThat(f.worseThanLinear()).isFalse();
  }

  @Test
  void fleetsWithoutAFigureAreLeftOutOfTheFitAndTheOrderDoesNotMatter() {
    Growth.Fit f = Growth.fit(new double[] {10000, 1000, 5000, 20000},
        new double[] {5200, 700, Double.NaN, 10200});

    assertThat(f.n()).isEqualTo(3);
    assertThat(f.slope()).isCloseTo(0.5, within(1e-9));
    assertThat(f.halfRatio()).isCloseTo(1, within(1e-9)); // 1,000-10,000 against 10,000-20,000
  }

  @Test
  void twoFleetsGiveASlopeButNoR2SinceAnyTwoPointsFitALine() {
    Growth.Fit f = Growth.fit(new double[] {10, 20}, new double[] {1, 5});

    assertThat(f.slope()).isCloseTo(0.4, within(1e-12));
    assertThat(f.r2()).isNaN();
    assertThat(f.halfRatio()).isNaN();
  }

  @Test
  void figuresKeepAboutThreeSignificantDigits() {
    assertThat(Growth.num(0.99999999999)).isEqualTo("1.00");
    assertThat(Growth.num(0.5)).isEqualTo("0.5000");
    assertThat(Growth.num(12.04)).isEqualTo("12.0");
    assertThat(Growth.num(-1339.4)).isEqualTo("-1,339");
    assertThat(Growth.num(Double.NaN)).isEqualTo("-");
  }

  @Test
  void oneFleetCannotBeFitted() {
    Growth.Fit f = Growth.fit(new double[] {1000}, new double[] {5});

    assertThat(f.slope()).isNaN();
    assertThat(f.worseThanLinear()).isFalse();
    assertThat(f.verdict()).isEqualTo("n/a (1 point)");
  }

  private static Growth.Raw raw(String event, int clients, int clusters, double p99Ms,
      double cpu, double loadgen, long rss, double wall) {
    return new Growth.Raw("meridian (yaml)", "sotw", clusters, clients, event, clients, p99Ms, cpu,
        loadgen, rss, wall);
  }

  private static final Growth.Series BY_CLIENTS = new Growth.Series("clients", 100);

  @Test
  void theTableShowsEachFleetsTimesBothCpusPeakRssAndTheServersShareOfTheMachine() {
    Growth.Row row = new Growth.Row(BY_CLIENTS, 1000, 100,
        raw("connect", 1000, 100, 1234, 3.8, 3.4, 1L << 30, 5),
        raw("one-endpoint", 1000, 100, 180, 0.4, 0.1, 3L << 29, 1));

    String table = Growth.table(List.of(row), 2);

    assertThat(table.lines().toList()).containsExactly(
        Growth.TABLE_HEADER.lines().findFirst().orElseThrow(),
        Growth.TABLE_HEADER.lines().skip(1).findFirst().orElseThrow(),
        "| clients (100 clusters) | 1,000 × 100 | 1.23 s | 180 ms | 3.8 / 0.4 | 3.4 / 0.1 | 1.50 GiB | 38 % / 20 % |");
  }

  @Test
  void aFleetThatFellShortSaysHowManyClientsItReachedAndAMissingEventIsADash() {
    Growth.Raw connect = new Growth.Raw("jcp", "sotw", 100, 1000, "connect", 998, 60_000, 70,
        7, 10L << 30, 61);
    String table = Growth.table(List.of(new Growth.Row(BY_CLIENTS, 1000, 100, connect, null)), 2);

    assertThat(table).contains("| clients (100 clusters) | 1,000 × 100 | 60.00 s (998/1000 reached) | - | 70.0 / - | 7.0 / - "
        + "| 10.00 GiB | 57 % / - |");
  }

  @Test
  void theFitTableNamesTheCostOfOneMoreClientAndFlagsWhereGrowthIsWorseThanLinear() {
    List<Growth.Row> rows = new java.util.ArrayList<>();
    for (double c : CLIENTS) {
      int n = (int) c;
      // connect p99 linear, 0.5 ms per client; server CPU quadratic; RSS 12 KiB per client.
      rows.add(new Growth.Row(BY_CLIENTS, n, 100,
          raw("connect", n, 100, 200 + 0.5 * c, c * c / 1e6, c / 1e4,
              (long) (500 * 1048576 + 12 * 1024 * c), 10),
          raw("one-endpoint", n, 100, 100, 0.1, 0.1, 1, 1)));
    }

    String fits = Growth.fits(rows);

    assertThat(fits).startsWith(Growth.FIT_HEADER);
    assertThat(fits).contains("| clients (100 clusters) | connect p99 | 0.5000 ms per client | 200 ms "
        + "| 1.000 | ");
    assertThat(fits).contains("| clients (100 clusters) | server peak RSS | 12.0 KiB per client | ");
    assertThat(fits.lines().filter(l -> l.contains("| server CPU, connect |")).findFirst()
        .orElseThrow()).contains("| 2.00 | ").endsWith("**worse than linear**: exponent 2.00 > 1.15, "
        + "marginal cost ×5.0 from the first half to the last |");
    assertThat(fits.lines().filter(l -> l.contains("| connect p99 |")).findFirst().orElseThrow())
        .endsWith("| linear or better |");
  }

  @Test
  void theServersShareOfTheMachineIsItsCpuOverWallTimesCores() {
    Growth.Row row = new Growth.Row(BY_CLIENTS, 1000, 100,
        raw("connect", 1000, 100, 1, 3, 1, 1, 4), raw("one-endpoint", 1000, 100, 1, 1, 1, 1, 4));

    assertThat(Growth.machineShare(List.of(row), 2)).isCloseTo(0.25, within(1e-12)); // 4 / (8 × 2)
  }

  @Test
  void theLoadGeneratorsRawLineIsWhatGrowthReads() {
    LoadGenerator.Result r = new LoadGenerator.Result("meridian (yaml)", "plaintext", "delta", 100,
        1000, "connect (run 2/2)", 999, new Stats(new double[] {10, 20, 30}), 1, 1, 3.25, 123456789L,
        1, new GcLog.Pauses(0, 0, 0), 0, 0, 1.5, 6.75);

    Growth.Raw parsed = Growth.Raw.parse(r.raw());

    assertThat(parsed).isEqualTo(new Growth.Raw("meridian (yaml)", "delta", 100, 1000, "connect",
        999, 30, 3.25, 1.5, 123456789L, 6.75));
  }

  @Test
  void eachFleetRunsConnectAndOneEndpointWithTheOtherFlagsPassedThrough() {
    List<String> cmd = Growth.command("java", List.of("-Xmx2g"), "bench.jar", "jcp", "delta", 20,
        40, Path.of("r.tsv"), Map.of("timeout", "60"));

    assertThat(cmd).containsExactly("java", "-Xmx2g", "-cp", "bench.jar",
        "dev.meridian.bench.LoadGenerator", "--server", "jcp", "--variant", "delta", "--clients",
        "20", "--clusters", "40", "--event", "connect,one-endpoint", "--raw", "r.tsv",
        "--timeout", "60");
    assertThatThrownBy(() -> Growth.command("java", List.of(), "bench.jar", "jcp", "delta", 20, 40,
        Path.of("r.tsv"), Map.of("event", "all"))).hasMessageContaining("--event");
  }

  @Test
  void theLoggedCommandQuotesWordsWithBlanksSoThatItCanBeRunAgain() {
    assertThat(Growth.shell(List.of("--server-jvm", "-Xmx1g -XX:+UseG1GC", "--meridian-args", "")))
        .isEqualTo("--server-jvm '-Xmx1g -XX:+UseG1GC' --meridian-args ''");
  }

  @Test
  void theReportSaysHowTheServerWasRunAndHowMuchOfTheMachineItHad() {
    Growth.Row row = new Growth.Row(BY_CLIENTS, 1000, 100,
        raw("connect", 1000, 100, 1, 3, 1, 1, 4), raw("one-endpoint", 1000, 100, 1, 1, 1, 1, 4));

    String report = Growth.report(List.of(row), 2, "how it ran");

    assertThat(report).startsWith("## Growth: meridian (yaml), sotw\n\nhow it ran\n\n| series |")
        .contains("The machine: nproc 2, shared by the server and the load generator. The server had "
            + "25 % of it");
  }

  @Test
  void theSeriesListsAreCommaSeparated() {
    assertThat(Growth.ints("1000, 5000,10_000")).containsExactly(1000, 5000, 10000);
  }
}
