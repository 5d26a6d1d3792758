package dev.meridian.bench;

import io.envoyproxy.controlplane.cache.v3.SimpleCache;
import io.envoyproxy.controlplane.cache.v3.Snapshot;
import io.envoyproxy.controlplane.server.V3DiscoveryServer;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * java-control-plane 1.0.49 serving the benchmark's {@link Fleet} from a {@link SimpleCache}
 * (every node in one group), ADS SotW and Delta, on 127.0.0.1. Commands on stdin, one per line:
 * {@code all-clusters}, {@code one-endpoint <i>}, {@code quit}; it answers {@code applied <n>}.
 * On stdin EOF it exits. Usage: {@code JcpServer <port> <clusters> <endpoints> [--tls-cert FILE
 * --tls-key FILE --tls-client-ca FILE]}: with the three flags (Meridian's, PEM files) it serves mTLS
 * and requires a client certificate chaining to the CA, as {@code meridian serve} does with them.
 */
public final class JcpServer {
  private JcpServer() {}

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    Fleet fleet = new Fleet(Integer.parseInt(args[1]), Integer.parseInt(args[2]));
    SimpleCache<String> cache = new SimpleCache<>(node -> "bench");
    int[] versions = {1, 1};
    cache.setSnapshot("bench", snapshot(fleet, versions));
    V3DiscoveryServer discovery = new V3DiscoveryServer(cache);
    InetSocketAddress address = new InetSocketAddress("127.0.0.1", port);
    Server server = (args.length > 3 ? NettyServerBuilder.forAddress(address, mtls(args))
        : NettyServerBuilder.forAddress(address))
        .permitKeepAliveTime(10, TimeUnit.SECONDS)
        .permitKeepAliveWithoutCalls(true)
        .maxInboundMessageSize(64 * 1024 * 1024)
        .addService(discovery.getAggregatedDiscoveryServiceImpl())
        .build().start();
    System.out.println("ready " + server.getPort());
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    int applied = 0;
    for (String line; (line = in.readLine()) != null; ) {
      String[] cmd = line.trim().split("\\s+");
      if (cmd[0].equals("all-clusters")) {
        fleet.changeAllClusters();
        versions[0]++;
      } else if (cmd[0].equals("one-endpoint")) {
        fleet.changeEndpoints(Integer.parseInt(cmd[1]));
        versions[1]++;
      } else if (cmd[0].equals("quit")) {
        break;
      } else {
        System.out.println("unknown " + line);
        continue;
      }
      cache.setSnapshot("bench", snapshot(fleet, versions));
      System.out.println("applied " + (++applied));
      System.out.flush();
    }
    server.shutdownNow();
    System.exit(0);
  }

  /** {@code --tls-cert F --tls-key F --tls-client-ca F} after the three numbers: mTLS. */
  static ServerCredentials mtls(String[] args) throws java.io.IOException {
    java.util.Map<String, String> flags = new java.util.HashMap<>();
    for (int i = 3; i + 1 < args.length; i += 2) {
      flags.put(args[i], args[i + 1]);
    }
    if (args.length != 9 || !flags.keySet().equals(
        java.util.Set.of("--tls-cert", "--tls-key", "--tls-client-ca"))) {
      throw new IllegalArgumentException(
          "JcpServer <port> <clusters> <endpoints> [--tls-cert F --tls-key F --tls-client-ca F]");
    }
    return TlsServerCredentials.newBuilder()
        .keyManager(new File(flags.get("--tls-cert")), new File(flags.get("--tls-key")))
        .trustManager(new File(flags.get("--tls-client-ca")))
        .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE).build();
  }

  /** Per-type versions, so a changed endpoint set does not resend the clusters. */
  static Snapshot snapshot(Fleet fleet, int[] versions) {
    return Snapshot.create(fleet.allClusters(), "c" + versions[0], fleet.allEndpoints(),
        "e" + versions[1], List.of(), "l1", List.of(), "r1", List.of(), "s1");
  }
}
