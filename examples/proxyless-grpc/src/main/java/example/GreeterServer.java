package example;

import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;

/** A greeter backend: {@code GreeterServer NAME PORT}. A plain gRPC server, found through Meridian's EDS. */
public final class GreeterServer {
  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: GreeterServer NAME PORT");
      System.exit(2);
    }
    String name = args[0];
    int port = Integer.parseInt(args[1]);
    Server server = Grpc.newServerBuilderForPort(port, InsecureServerCredentials.create())
        .addService(Greeter.service(name))
        .build()
        .start();
    System.out.printf("greeter %s listening on port %d%n", name, server.getPort());
    Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
    server.awaitTermination();
  }
}
