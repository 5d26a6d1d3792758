package example;

import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * A proxyless gRPC client: {@code GreeterClient [TARGET]} (default {@code xds:///greeter}). The xDS
 * bootstrap comes from the file named by {@code GRPC_XDS_BOOTSTRAP}. Sends 50 RPCs a second and
 * prints, every second, how many each backend answered.
 */
public final class GreeterClient {
  public static void main(String[] args) throws Exception {
    String target = args.length > 0 ? args[0] : "xds:///greeter";
    ManagedChannel channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
    Runtime.getRuntime().addShutdownHook(new Thread(channel::shutdownNow));
    while (true) {
      Map<String, Integer> counts = new TreeMap<>();
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
      while (System.nanoTime() < end) {
        String key;
        try {
          String reply = ClientCalls.blockingUnaryCall(channel, Greeter.SAY_HELLO,
              CallOptions.DEFAULT.withWaitForReady().withDeadlineAfter(5, TimeUnit.SECONDS), "world");
          key = reply.substring(reply.lastIndexOf(' ') + 1);
        } catch (StatusRuntimeException e) {
          key = "error " + e.getStatus().getCode();
        }
        counts.merge(key, 1, Integer::sum);
        Thread.sleep(20);
      }
      System.out.println(counts);
    }
  }
}
