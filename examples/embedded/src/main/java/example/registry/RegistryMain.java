package example.registry;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Runs the registry. Flags (all optional):
 * <pre>
 * --bind ADDR                 address of every port (default 127.0.0.1)
 * --xds-port N                xDS, gRPC (default 18000)
 * --http-port N               registry API: /register, /deregister, /services (default 18080)
 * --admin-port N              Meridian's admin pages (default 18001)
 * --instance SERVICE=IP:PORT  registered at start; repeat for more
 * --churn SECONDS             every SECONDS, deregister or re-register the last --instance
 * </pre>
 */
public final class RegistryMain {
  private RegistryMain() {}

  public static void main(String[] args) throws Exception {
    String bind = "127.0.0.1";
    int xdsPort = 18000;
    int httpPort = 18080;
    int adminPort = 18001;
    int churn = 0;
    List<String[]> instances = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String flag = args[i];
      if (i + 1 >= args.length) {
        usage("missing the value of " + flag);
      }
      String value = args[++i];
      switch (flag) {
        case "--bind" -> bind = value;
        case "--xds-port" -> xdsPort = Integer.parseInt(value);
        case "--http-port" -> httpPort = Integer.parseInt(value);
        case "--admin-port" -> adminPort = Integer.parseInt(value);
        case "--churn" -> churn = Integer.parseInt(value);
        case "--instance" -> {
          String[] kv = value.split("=", 2);
          if (kv.length != 2) {
            usage("--instance is SERVICE=IP:PORT, got " + value);
          }
          instances.add(kv);
        }
        default -> usage("unknown flag " + flag);
      }
    }

    ServiceRegistry registry = new ServiceRegistry();
    for (String[] kv : instances) {
      registry.register(kv[0], ServiceRegistry.Instance.parse(kv[1]));
    }
    EmbeddedRegistry server = EmbeddedRegistry.start(registry,
        new InetSocketAddress(bind, xdsPort), new InetSocketAddress(bind, httpPort),
        new InetSocketAddress(bind, adminPort));
    System.out.printf("registry serving xDS on %s:%d, its API on http://%s:%d, admin on http://%s:%d%n",
        bind, server.xdsPort(), bind, server.httpAddress().getPort(),
        bind, server.adminAddress().getPort());

    ScheduledExecutorService churner = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "registry-churn");
      t.setDaemon(true);
      return t;
    });
    if (churn > 0 && !instances.isEmpty()) {
      String[] last = instances.get(instances.size() - 1);
      ServiceRegistry.Instance instance = ServiceRegistry.Instance.parse(last[1]);
      churner.scheduleWithFixedDelay(() -> {
        if (!registry.deregister(last[0], instance)) {
          registry.register(last[0], instance);
        }
      }, churn, churn, TimeUnit.SECONDS);
    }

    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      churner.shutdownNow();
      server.close();
      stopped.countDown();
    }, "registry-shutdown"));
    stopped.await();
  }

  private static void usage(String problem) {
    System.err.println(problem);
    System.err.println("usage: RegistryMain [--bind ADDR] [--xds-port N] [--http-port N]"
        + " [--admin-port N] [--instance SERVICE=IP:PORT]... [--churn SECONDS]");
    System.exit(2);
  }
}
