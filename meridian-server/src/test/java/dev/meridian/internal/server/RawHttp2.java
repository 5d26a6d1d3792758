package dev.meridian.internal.server;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * An HTTP/2 client by hand, over a plain socket: the frames a misbehaving client sends (a gRPC
 * message declared and never finished), which no gRPC library would send. Frames of at most
 * 16 KiB (HTTP/2's default); flow control is the caller's to respect (64 KiB before the server's
 * connection WINDOW_UPDATE).
 */
final class RawHttp2 implements AutoCloseable {
  static final String ADS_PATH =
      "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
  static final int DATA = 0;
  static final int HEADERS = 1;
  static final int RST_STREAM = 3;
  static final int SETTINGS = 4;
  static final int END_STREAM = 1;

  final Socket socket;
  private final OutputStream out;
  private final DataInputStream in;

  record Frame(int type, int flags, int stream, byte[] payload) {}

  /** Connected from {@code localAddress} (e.g. 127.0.0.2), preface and SETTINGS sent. */
  RawHttp2(String localAddress, int port) throws IOException {
    socket = new Socket();
    socket.bind(new InetSocketAddress(localAddress, 0));
    socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
    socket.setSoTimeout(10_000);
    out = socket.getOutputStream();
    in = new DataInputStream(socket.getInputStream());
    out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    out.write(frame(SETTINGS, 0, 0, new byte[0]));
    out.flush();
  }

  /**
   * Opens ADS stream {@code stream} and sends the 5-byte prefix of a message of {@code declared}
   * bytes, then {@code sent} of them.
   */
  void sendPartOfAMessage(int stream, int declared, int sent) throws IOException {
    ByteArrayOutputStream h = new ByteArrayOutputStream();
    header(h, ":method", "POST");
    header(h, ":scheme", "http");
    header(h, ":path", ADS_PATH);
    header(h, ":authority", "127.0.0.1");
    header(h, "content-type", "application/grpc");
    header(h, "te", "trailers");
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    all.writeBytes(frame(HEADERS, 4 /* END_HEADERS */, stream, h.toByteArray()));
    byte[] body = new byte[5 + sent];
    body[1] = (byte) (declared >>> 24);
    body[2] = (byte) (declared >>> 16);
    body[3] = (byte) (declared >>> 8);
    body[4] = (byte) declared;
    for (int off = 0; off < body.length; off += 16384) {
      int n = Math.min(16384, body.length - off);
      byte[] chunk = new byte[n];
      System.arraycopy(body, off, chunk, 0, n);
      all.writeBytes(frame(DATA, 0, stream, chunk));
    }
    out.write(all.toByteArray());
    out.flush();
  }

  /** The next frame from the server; SETTINGS are acknowledged. */
  Frame read() throws IOException {
    int length = (in.readUnsignedByte() << 16) | in.readUnsignedShort();
    int type = in.readUnsignedByte();
    int flags = in.readUnsignedByte();
    int stream = in.readInt() & 0x7fffffff;
    Frame f = new Frame(type, flags, stream, in.readNBytes(length));
    if (type == SETTINGS && (flags & 1) == 0) {
      out.write(frame(SETTINGS, 1, 0, new byte[0]));
      out.flush();
    }
    return f;
  }

  /** Reads until the server ends {@code stream} (trailers or RST_STREAM). */
  void awaitEndOf(int stream) throws IOException {
    while (true) {
      Frame f = read();
      if (f.stream() == stream && (f.type() == RST_STREAM
          || (f.type() == HEADERS && (f.flags() & END_STREAM) != 0))) {
        return;
      }
    }
  }

  /** HPACK: a literal header field without indexing, new name, no Huffman; short strings. */
  private static void header(ByteArrayOutputStream b, String name, String value) {
    b.write(0);
    b.write(name.length());
    b.writeBytes(name.getBytes(StandardCharsets.US_ASCII));
    b.write(value.length());
    b.writeBytes(value.getBytes(StandardCharsets.US_ASCII));
  }

  static byte[] frame(int type, int flags, int stream, byte[] payload) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    b.write(payload.length >>> 16);
    b.write(payload.length >>> 8);
    b.write(payload.length);
    b.write(type);
    b.write(flags);
    b.write(stream >>> 24);
    b.write(stream >>> 16);
    b.write(stream >>> 8);
    b.write(stream);
    b.writeBytes(payload);
    return b.toByteArray();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
