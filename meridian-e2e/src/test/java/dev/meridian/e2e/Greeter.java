package dev.meridian.e2e;

import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * A proto-free greeter: one unary method whose request and response are UTF-8 strings. Each backend
 * answers with its own name, so a client sees which backend served each RPC.
 */
final class Greeter {
  static final MethodDescriptor<String, String> HELLO = MethodDescriptor.<String, String>newBuilder()
      .setType(MethodDescriptor.MethodType.UNARY)
      .setFullMethodName(MethodDescriptor.generateFullMethodName("meridian.e2e.Greeter", "Hello"))
      .setRequestMarshaller(Utf8.INSTANCE)
      .setResponseMarshaller(Utf8.INSTANCE)
      .build();

  private Greeter() {}

  /** The greeter service answering with {@code name}. */
  static ServerServiceDefinition service(String name) {
    return ServerServiceDefinition.builder("meridian.e2e.Greeter")
        .addMethod(HELLO, ServerCalls.asyncUnaryCall((req, out) -> {
          out.onNext(name);
          out.onCompleted();
        }))
        .build();
  }

  /** A plain (non-xDS) greeter backend on an ephemeral loopback port. */
  static final class Backend implements AutoCloseable {
    final String name;
    final Server server;

    Backend(String name) {
      this.name = name;
      try {
        this.server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
            .addService(service(name))
            .build()
            .start();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    int port() {
      return server.getPort();
    }

    @Override
    public void close() throws InterruptedException {
      server.shutdownNow();
      server.awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private enum Utf8 implements MethodDescriptor.Marshaller<String> {
    INSTANCE;

    @Override
    public InputStream stream(String value) {
      return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public String parse(InputStream stream) {
      try {
        return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
