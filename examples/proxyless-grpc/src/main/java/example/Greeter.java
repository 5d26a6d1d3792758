package example;

import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** A tiny greeter without .proto files: one unary method, UTF-8 strings in and out. */
final class Greeter {
  static final MethodDescriptor<String, String> SAY_HELLO =
      MethodDescriptor.<String, String>newBuilder()
          .setType(MethodDescriptor.MethodType.UNARY)
          .setFullMethodName("example.Greeter/SayHello")
          .setRequestMarshaller(new Utf8())
          .setResponseMarshaller(new Utf8())
          .build();

  private Greeter() {}

  static ServerServiceDefinition service(String backend) {
    return ServerServiceDefinition.builder("example.Greeter")
        .addMethod(SAY_HELLO, ServerCalls.asyncUnaryCall((name, out) -> {
          out.onNext("hello " + name + " from " + backend);
          out.onCompleted();
        }))
        .build();
  }

  private static final class Utf8 implements MethodDescriptor.Marshaller<String> {
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
