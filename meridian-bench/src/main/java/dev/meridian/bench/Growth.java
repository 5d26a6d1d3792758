package dev.meridian.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;

/**
 * The growth table of issue 23: runs the {@link LoadGenerator} once per fleet, each in its own JVM
 * (a fresh server and load generator per row, as the loops of docs/benchmarks.md run them), over a
 * series of client counts at a fixed cluster count and a series of cluster counts at a fixed
 * client count, events connect and one-endpoint; prints connect and one-change p99, both CPUs,
 * peak RSS and the server's share of the machine per fleet, then the fitted cost of one more
 * client or cluster and where growth is worse than linear.
 *
 * <pre>
 * java -cp meridian-bench/target/meridian-bench.jar dev.meridian.bench.Growth \
 *   --server meridian|jcp|embedded --variant sotw|delta [LoadGenerator flags...]
 * </pre>
 */
public final class Growth {
  /** A power-law exponent above this is worse than linear (noise on 2 shared cores allowed). */
  static final double EXPONENT_LIMIT = 1.15;
  /** A marginal cost that grows by more than this from the first half to the last half is too. */
  static final double HALF_RATIO_LIMIT = 1.5;

  /** Flags that Growth sets on each LoadGenerator itself. */
  static final List<String> OWNED = List.of("clients", "clusters", "event", "raw", "server",
      "variant");

  static String usage() {
    return """
        Usage: Growth [options] [LoadGenerator options]
          --clients-list N,N,...     the client series (default 1000,5000,10000,20000)
          --series-clusters N        its clusters (default 100)
          --clusters-list N,N,...    the cluster series (default 1000,10000,50000)
          --series-clients N         its clients (default 1000)
          --server meridian|embedded|jcp   (default meridian)
          --variant sotw|delta       (default sotw)
          --loadgen-jvm "FLAGS"      each load generator JVM's flags (default "-Xmx6g" and the
                                     unzeroed direct memory flags of docs/benchmarks.md)
          --work-dir PATH            raw figures of each fleet (default target/bench-growth);
                                     passed on to the LoadGenerator unless given
        Any other --flag value goes to every LoadGenerator as is (e.g. --config-format json,
        --timeout 120, --server-jvm "-Xmx10g -XX:+UseG1GC", --out rows.md). Each fleet runs
        --event connect,one-endpoint in a fresh load generator JVM and server; with --repeat N
        the table takes each event's last measured run (--out has them all).
        """;
  }

  /** One measured event of one fleet, as {@link LoadGenerator.Result#raw()} writes it. */
  record Raw(String server, String variant, int clusters, int clients, String event, int reached,
      double p99Ms, double serverCpuS, double loadgenCpuS, long peakRssBytes, double wallS) {
    static Raw parse(String line) {
      String[] f = line.split("\t");
      if (f.length != 11) {
        throw new IllegalArgumentException("not a LoadGenerator --raw line: " + line);
      }
      return new Raw(f[0], f[1], Integer.parseInt(f[2]), Integer.parseInt(f[3]), f[4],
          Integer.parseInt(f[5]), Double.parseDouble(f[6]), Double.parseDouble(f[7]),
          Double.parseDouble(f[8]), Long.parseLong(f[9]), Double.parseDouble(f[10]));
    }

    /** The server's CPU over the event as a share of every core of the machine for its time. */
    double machineShare(int nproc) {
      return serverCpuS / (wallS * nproc);
    }
  }

  /** A series: which fleet size varies ("clients" or "clusters") and the one held fixed. */
  record Series(String varies, int fixed) {
    String title() {
      return varies + " (" + String.format(Locale.ROOT, "%,d", fixed) + " "
          + (varies.equals("clients") ? "clusters" : "clients") + ")";
    }

    String unit() {
      return varies.equals("clients") ? "client" : "cluster";
    }
  }

  /** One fleet: its connect and one-change runs (null: the run gave no figures). */
  record Row(Series series, int clients, int clusters, Raw connect, Raw oneChange) {
    int x() {
      return series.varies().equals("clients") ? clients : clusters;
    }

    long peakRss() {
      return Math.max(connect == null ? -1 : connect.peakRssBytes(),
          oneChange == null ? -1 : oneChange.peakRssBytes());
    }
  }

  /**
   * A least-squares line y = intercept + slope·x over n points, its R², the exponent of a
   * least-squares power law (log y on log x; 1 is linear) and the slope of the last half of the
   * points over the slope of the first half (a marginal cost that grows; a fixed part hides that
   * from the exponent).
   */
  record Fit(int n, double intercept, double slope, double r2, double exponent,
      double halfRatio) {
    boolean worseThanLinear() {
      return exponent > EXPONENT_LIMIT || halfRatio > HALF_RATIO_LIMIT;
    }

    String verdict() {
      if (n < 2) {
        return "n/a (" + n + " point" + (n == 1 ? "" : "s") + ")";
      }
      List<String> why = new ArrayList<>();
      if (exponent > EXPONENT_LIMIT) {
        why.add(String.format(Locale.ROOT, "exponent %.2f > %.2f", exponent, EXPONENT_LIMIT));
      }
      if (halfRatio > HALF_RATIO_LIMIT) {
        why.add(String.format(Locale.ROOT, "marginal cost ×%.1f from the first half to the last",
            halfRatio));
      }
      return why.isEmpty() ? "linear or better" : "**worse than linear**: " + String.join(", ", why);
    }
  }

  /** Fits the points whose x and y are numbers; see {@link Fit}. */
  static Fit fit(double[] xs, double[] ys) {
    List<double[]> pts = new ArrayList<>();
    for (int i = 0; i < xs.length; i++) {
      if (Double.isFinite(xs[i]) && Double.isFinite(ys[i])) {
        pts.add(new double[] {xs[i], ys[i]});
      }
    }
    pts.sort(Comparator.comparingDouble(p -> p[0]));
    int n = pts.size();
    if (n < 2) {
      return new Fit(n, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
    }
    double[] line = line(pts);
    double mean = pts.stream().mapToDouble(p -> p[1]).average().orElse(0);
    double ssRes = 0;
    double ssTot = 0;
    for (double[] p : pts) {
      double e = p[1] - (line[0] + line[1] * p[0]);
      ssRes += e * e;
      ssTot += (p[1] - mean) * (p[1] - mean);
    }
    // Two points always fit a line: an R² of 1 would say nothing.
    double r2 = ssTot == 0 || n < 3 ? Double.NaN : 1 - ssRes / ssTot;
    List<double[]> logs = pts.stream().filter(p -> p[0] > 0 && p[1] > 0)
        .map(p -> new double[] {Math.log(p[0]), Math.log(p[1])}).toList();
    double exponent = logs.size() < 2 ? Double.NaN : line(logs)[1];
    double halfRatio = Double.NaN;
    if (n >= 3) {
      int k = (n + 1) / 2; // the halves share the middle point when n is odd
      double first = line(pts.subList(0, k))[1];
      double last = line(pts.subList(n - k, n))[1];
      halfRatio = first > 0 ? last / first : Double.NaN;
    }
    return new Fit(n, line[0], line[1], r2, exponent, halfRatio);
  }

  /** Ordinary least squares over at least 2 points: {intercept, slope}. */
  private static double[] line(List<double[]> pts) {
    double mx = pts.stream().mapToDouble(p -> p[0]).average().orElse(0);
    double my = pts.stream().mapToDouble(p -> p[1]).average().orElse(0);
    double sxy = 0;
    double sxx = 0;
    for (double[] p : pts) {
      sxy += (p[0] - mx) * (p[1] - my);
      sxx += (p[0] - mx) * (p[0] - mx);
    }
    double slope = sxx == 0 ? Double.NaN : sxy / sxx;
    return new double[] {my - slope * mx, slope};
  }

  static final String TABLE_HEADER = "| series | fleet (clients × clusters) | connect p99 "
      + "| one-change p99 | server CPU s, connect / one-change "
      + "| load generator CPU s, connect / one-change | server peak RSS "
      + "| server's share of the machine, connect / one-change |\n"
      + "|---|---|---:|---:|---:|---:|---:|---:|";

  /** The growth table, one row per fleet; nproc for the server's share of the machine. */
  static String table(List<Row> rows, int nproc) {
    StringBuilder sb = new StringBuilder(TABLE_HEADER).append('\n');
    for (Row r : rows) {
      sb.append(String.format(Locale.ROOT,
          "| %s | %,d × %,d | %s | %s | %s / %s | %s / %s | %s | %s / %s |%n", r.series().title(),
          r.clients(), r.clusters(), p99(r.connect()), p99(r.oneChange()),
          cpu(r.connect(), Raw::serverCpuS), cpu(r.oneChange(), Raw::serverCpuS),
          cpu(r.connect(), Raw::loadgenCpuS), cpu(r.oneChange(), Raw::loadgenCpuS),
          LoadGenerator.size(r.peakRss()), share(r.connect(), nproc), share(r.oneChange(), nproc)));
    }
    return sb.toString();
  }

  private static String p99(Raw r) {
    if (r == null) {
      return "-";
    }
    String p = LoadGenerator.ms(r.p99Ms());
    return r.reached() == r.clients() ? p : p + " (" + r.reached() + "/" + r.clients() + " reached)";
  }

  private static String cpu(Raw r, ToDoubleFunction<Raw> f) {
    return r == null ? "-" : String.format(Locale.ROOT, "%.1f", f.applyAsDouble(r));
  }

  private static String share(Raw r, int nproc) {
    return r == null || !(r.wallS() > 0) ? "-"
        : String.format(Locale.ROOT, "%.0f %%", 100 * r.machineShare(nproc));
  }

  /** What the fits cover: a name, the unit of one more, and the figure of a fleet. */
  private record Quantity(String name, String unit, ToDoubleFunction<Row> value) {}

  private static final List<Quantity> QUANTITIES = List.of(
      new Quantity("connect p99", "ms", r -> r.connect() == null ? Double.NaN : r.connect().p99Ms()),
      new Quantity("one-change p99", "ms",
          r -> r.oneChange() == null ? Double.NaN : r.oneChange().p99Ms()),
      new Quantity("server CPU, connect", "CPU-ms",
          r -> r.connect() == null ? Double.NaN : r.connect().serverCpuS() * 1000),
      new Quantity("load generator CPU, connect", "CPU-ms",
          r -> r.connect() == null ? Double.NaN : r.connect().loadgenCpuS() * 1000),
      new Quantity("server CPU, one change", "CPU-ms",
          r -> r.oneChange() == null ? Double.NaN : r.oneChange().serverCpuS() * 1000),
      new Quantity("server peak RSS", "KiB", r -> r.peakRss() < 0 ? Double.NaN : r.peakRss() / 1024.0));

  static final String FIT_HEADER = "| series | quantity | cost of one more | fixed part | R² "
      + "| power-law exponent | marginal cost, last half / first half | growth |\n"
      + "|---|---|---:|---:|---:|---:|---:|---|";

  /** The fitted growth of every quantity over each series. */
  static String fits(List<Row> rows) {
    StringBuilder sb = new StringBuilder(FIT_HEADER).append('\n');
    for (Series s : rows.stream().map(Row::series).distinct().toList()) {
      List<Row> series = rows.stream().filter(r -> r.series().equals(s)).toList();
      double[] x = series.stream().mapToDouble(Row::x).toArray();
      for (Quantity q : QUANTITIES) {
        Fit f = fit(x, series.stream().mapToDouble(q.value()).toArray());
        sb.append(String.format(Locale.ROOT, "| %s | %s | %s %s per %s | %s %s | %s | %s | %s | %s |%n",
            s.title(), q.name(), num(f.slope()), q.unit(), s.unit(), num(f.intercept()), q.unit(),
            fixed(f.r2(), 3), fixed(f.exponent(), 2), fixed(f.halfRatio(), 2), f.verdict()));
      }
    }
    return sb.toString();
  }

  /** About three significant digits, without exponents for the sizes a bench gives. */
  static String num(double v) {
    if (!Double.isFinite(v)) {
      return "-";
    }
    double a = Math.abs(v) * (1 + 1e-9); // 0.9999999999 is 1.00, not 1.0000
    String f = a >= 100 ? "%,.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : a >= 0.001 ? "%.4f" : "%.3g";
    return String.format(Locale.ROOT, f, v);
  }

  private static String fixed(double v, int digits) {
    return Double.isFinite(v) ? String.format(Locale.ROOT, "%." + digits + "f", v) : "-";
  }

  /** The server's share of the machine over all the events of the table. */
  static double machineShare(List<Row> rows, int nproc) {
    double cpu = 0;
    double wall = 0;
    for (Row r : rows) {
      for (Raw e : Arrays.asList(r.connect(), r.oneChange())) {
        if (e != null && e.wallS() > 0) {
          cpu += e.serverCpuS();
          wall += e.wallS();
        }
      }
    }
    return wall > 0 ? cpu / (wall * nproc) : Double.NaN;
  }

  /** The whole report: the table, the machine, the fits; {@code how} says how it was run. */
  static String report(List<Row> rows, int nproc, String how) {
    String server = rows.stream().flatMap(r -> Arrays.asList(r.connect(), r.oneChange()).stream())
        .filter(e -> e != null).map(e -> e.server() + ", " + e.variant()).findFirst().orElse("?");
    return String.format(Locale.ROOT, "## Growth: %s%n%n%s%n%n", server, how) + table(rows, nproc)
        + String.format(Locale.ROOT, "%nThe machine: nproc %d, shared by the server and the load"
            + " generator. The server had %.0f %% of it over these events (server CPU s / (wall s ×"
            + " nproc), each event from its trigger until the fleet was quiet).%n%n", nproc,
            100 * machineShare(rows, nproc))
        + "Fitted growth (least squares over each series: y = fixed part + cost × n; power law"
        + " y = c·n^k fitted on logs):\n\n" + fits(rows);
  }

  /** The LoadGenerator command of one fleet. */
  static List<String> command(String java, List<String> jvm, String classpath, String server,
      String variant, int clients, int clusters, Path raw, Map<String, String> passThrough) {
    List<String> cmd = new ArrayList<>();
    cmd.add(java);
    cmd.addAll(jvm);
    cmd.addAll(List.of("-cp", classpath, LoadGenerator.class.getName(), "--server", server,
        "--variant", variant, "--clients", Integer.toString(clients), "--clusters",
        Integer.toString(clusters), "--event", "connect,one-endpoint", "--raw", raw.toString()));
    passThrough.forEach((k, v) -> {
      if (OWNED.contains(k)) {
        throw new IllegalArgumentException("--" + k + " is Growth's to set");
      }
      cmd.add("--" + k);
      cmd.add(v);
    });
    return cmd;
  }

  static List<Integer> ints(String list) {
    return Arrays.stream(list.split(",")).map(String::trim).filter(s -> !s.isEmpty())
        .map(s -> Integer.parseInt(s.replace("_", ""))).toList();
  }

  private static List<String> words(String flags) {
    return Arrays.stream(flags.trim().split("\\s+")).filter(w -> !w.isEmpty()).toList();
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> own = new LinkedHashMap<>();
    own.put("clients-list", "1000,5000,10000,20000");
    own.put("series-clusters", "100");
    own.put("clusters-list", "1000,10000,50000");
    own.put("series-clients", "1000");
    own.put("server", "meridian");
    own.put("variant", "sotw");
    own.put("loadgen-jvm", "-Xmx6g " + String.join(" ", LoadGenerator.UNZEROED_DIRECT_MEMORY));
    own.put("work-dir", "target/bench-growth");
    Map<String, String> passThrough = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--help") || args[i].equals("-h")) {
        System.out.print(usage());
        return;
      }
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        System.err.print("bad argument " + args[i] + "\n" + usage());
        System.exit(2);
      }
      String k = args[i].substring(2);
      (own.containsKey(k) ? own : passThrough).put(k, args[++i]);
    }
    Path work = Path.of(own.get("work-dir")).toAbsolutePath();
    Files.createDirectories(work);
    passThrough.putIfAbsent("work-dir", work.toString());
    long timeoutS = Long.parseLong(passThrough.getOrDefault("timeout", "300"));
    List<int[]> fleets = new ArrayList<>(); // {clients, clusters, 0 = client series | 1}
    ints(own.get("clients-list")).forEach(c ->
        fleets.add(new int[] {c, Integer.parseInt(own.get("series-clusters")), 0}));
    ints(own.get("clusters-list")).forEach(k ->
        fleets.add(new int[] {Integer.parseInt(own.get("series-clients")), k, 1}));
    Series bySize = new Series("clients", Integer.parseInt(own.get("series-clusters")));
    Series byClusters = new Series("clusters", Integer.parseInt(own.get("series-clients")));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<Row> rows = new ArrayList<>();
    Map<String, Row> ran = new LinkedHashMap<>(); // a fleet in both series runs once
    String how = "Each fleet: a fresh load generator JVM (" + own.get("loadgen-jvm") + ") running"
        + " LoadGenerator --server " + own.get("server") + " --variant " + own.get("variant")
        + " --event connect,one-endpoint " + shell(passThrough.entrySet().stream()
            .flatMap(e -> Stream.of("--" + e.getKey(), e.getValue())).toList())
        + ".";
    for (int[] f : fleets) {
      Series series = f[2] == 0 ? bySize : byClusters;
      Row before = ran.get(f[0] + "x" + f[1]);
      if (before != null) {
        LoadGenerator.log("growth: %,d clients × %,d clusters ran already", f[0], f[1]);
        rows.add(new Row(series, f[0], f[1], before.connect(), before.oneChange()));
        continue;
      }
      Path raw = work.resolve("growth-" + own.get("server") + "-" + own.get("variant") + "-"
          + f[0] + "x" + f[1] + ".tsv");
      Files.deleteIfExists(raw);
      List<String> cmd = command(java, words(own.get("loadgen-jvm")),
          System.getProperty("java.class.path"), own.get("server"), own.get("variant"), f[0], f[1],
          raw, passThrough);
      LoadGenerator.log("growth: %,d clients × %,d clusters: %s", f[0], f[1], shell(cmd));
      int exit = run(cmd, timeoutS * 10 + 600);
      List<Raw> events = Files.exists(raw)
          ? Files.readAllLines(raw).stream().filter(l -> !l.isBlank()).map(Raw::parse).toList()
          : List.of();
      if (exit != 0) {
        LoadGenerator.log("growth: the load generator exited with %d", exit);
      }
      Row row = new Row(series, f[0], f[1], last(events, "connect"), last(events, "one-endpoint"));
      rows.add(row);
      ran.put(f[0] + "x" + f[1], row);
      // A report so far after every fleet: a long matrix that dies late still leaves its rows.
      Files.writeString(work.resolve("growth-report.md"),
          report(rows, Runtime.getRuntime().availableProcessors(), how));
    }
    System.out.print(report(rows, Runtime.getRuntime().availableProcessors(), how));
  }

  /** Words joined as a shell would take them back (quoted where they hold a blank). */
  static String shell(List<String> words) {
    return String.join(" ", words.stream()
        .map(w -> w.isEmpty() || w.matches(".*[\\s\"'$].*")
            ? "'" + w.replace("'", "'\\''") + "'" : w)
        .toList());
  }

  /** The last measured run of an event (with --repeat, the last one; the rows file has all). */
  private static Raw last(List<Raw> events, String event) {
    Raw found = null;
    for (Raw r : events) {
      if (r.event().equals(event)) {
        found = r;
      }
    }
    return found;
  }

  /** Runs a child JVM, its output on our stderr (our stdout is the report); bounded. */
  private static int run(List<String> cmd, long timeoutS) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    Thread pump = new Thread(() -> copy(p.getInputStream(), System.err), "growth-child-output");
    pump.setDaemon(true);
    pump.start();
    if (!p.waitFor(timeoutS, TimeUnit.SECONDS)) {
      LoadGenerator.log("growth: no end after %d s; stopping the load generator", timeoutS);
      p.destroy(); // its shutdown hook stops the server it started
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
      return -1;
    }
    pump.join(5000);
    return p.exitValue();
  }

  private static void copy(InputStream in, OutputStream out) {
    try (in) {
      in.transferTo(out);
    } catch (IOException e) {
      // the child is gone; nothing more to show
    }
  }
}
