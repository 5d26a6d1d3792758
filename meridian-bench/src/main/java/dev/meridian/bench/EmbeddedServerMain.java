package dev.meridian.bench;

import com.google.protobuf.Message;
import dev.meridian.server.Change;
import dev.meridian.server.Meridian;
import dev.meridian.server.NodeGrouping;
import dev.meridian.server.Publication;
import dev.meridian.server.Publisher;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Meridian embedded in an application (issue 22), serving the benchmark's {@link Fleet} through
 * the public API only ({@code dev.meridian.server}): the application builds the fleet's messages,
 * publishes them with {@link Publisher#set}, serves on {@link Meridian#start} (127.0.0.1) and
 * applies the benchmark's events through the publisher. Every node in one group.
 *
 * <p>As {@link JcpServer}: commands on stdin, one per line: {@code all-clusters} (every cluster
 * rebuilt and the whole group set again with {@link Publisher#set}, as an application that
 * recomputes its config does), {@code one-endpoint <i>} (the one endpoint set upserted with
 * {@link Publisher#update}), {@code quit}. It answers {@code applied <n> build_ms=.. publish_ms=..
 * changed=..} (the time to build the messages, then the publisher call). On stdin EOF it exits.
 *
 * <p>Usage: {@code EmbeddedServerMain <port> <clusters> <endpoints> [--http-port N] [--tls-cert F
 * --tls-key F --tls-client-ca F]}: with {@code --http-port} the admin endpoints ({@code /metrics})
 * on 127.0.0.1; with the three TLS flags (PEM files) mTLS, as {@code meridian serve} does.
 */
public final class EmbeddedServerMain {
  /** The one group every node is placed in. */
  static final String GROUP = "bench";

  private EmbeddedServerMain() {}

  public static void main(String[] args) throws Exception {
    run(args, System.in, System.out);
    System.exit(0);
  }

  /** Serves until {@code quit} or EOF on {@code in}; writes {@code ready <port> [http <port>]}, then answers each command. */
  static void run(String[] args, InputStream in, PrintStream out) throws Exception {
    if (args.length < 3) {
      throw new IllegalArgumentException("EmbeddedServerMain <port> <clusters> <endpoints>"
          + " [--http-port N] [--tls-cert F --tls-key F --tls-client-ca F]");
    }
    int port = Integer.parseInt(args[0]);
    Fleet fleet = new Fleet(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
    Map<String, String> flags = new HashMap<>();
    for (int i = 3; i + 1 < args.length; i += 2) {
      flags.put(args[i], args[i + 1]);
    }
    Meridian.Builder builder = Meridian.builder().grouping(NodeGrouping.everyone(GROUP))
        .controlPlaneId("meridian-bench-embedded")
        // every bench client connects from 127.0.0.1: one peer, whose quotas are lifted
        .maxConnectionsPerPeer(1_000_000).maxStreamsPerPeer(1_000_000);
    if (flags.containsKey("--tls-cert")) {
      builder.tls(Path.of(flags.get("--tls-cert")), Path.of(flags.get("--tls-key")),
          Path.of(flags.get("--tls-client-ca")));
    }
    try (Meridian meridian = builder.build()) {
      Publisher publisher = meridian.publisher();
      publisher.set(GROUP, all(fleet));
      meridian.start(new InetSocketAddress("127.0.0.1", port));
      String admin = "";
      if (flags.containsKey("--http-port")) {
        admin = " http " + meridian.admin().startHttp(new InetSocketAddress("127.0.0.1",
            Integer.parseInt(flags.get("--http-port")))).getPort();
      }
      out.println("ready " + meridian.port() + admin);
      out.flush();
      BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      int applied = 0;
      for (String line; (line = reader.readLine()) != null; ) {
        String[] cmd = line.trim().split("\\s+");
        long t0 = System.nanoTime();
        long t1;
        Publication p;
        if (cmd[0].equals("all-clusters")) {
          fleet.changeAllClusters();
          List<Message> resources = all(fleet);
          t1 = System.nanoTime();
          p = publisher.set(GROUP, resources);
        } else if (cmd[0].equals("one-endpoint")) {
          int k = Integer.parseInt(cmd[1]);
          fleet.changeEndpoints(k);
          Change change = Change.upsert(fleet.endpoints(k));
          t1 = System.nanoTime();
          p = publisher.update(GROUP, change);
        } else if (cmd[0].equals("quit")) {
          break;
        } else {
          out.println("unknown " + line);
          out.flush();
          continue;
        }
        long t2 = System.nanoTime();
        out.println(String.format(Locale.ROOT, "applied %d build_ms=%.1f publish_ms=%.1f changed=%d",
            ++applied, (t1 - t0) / 1e6, (t2 - t1) / 1e6, p.changed()));
        out.flush();
      }
    }
  }

  /** Every cluster and endpoint set of the fleet, as new messages. */
  static List<Message> all(Fleet fleet) {
    List<Message> resources = new ArrayList<>(2 * fleet.clusters());
    resources.addAll(fleet.allClusters());
    resources.addAll(fleet.allEndpoints());
    return resources;
  }
}
