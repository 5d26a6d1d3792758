package dev.meridian.bench;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * What a simulated client needs of a (Delta)DiscoveryResponse, read straight from its bytes: type
 * URL, version, nonce, size, and for each resource the index of its {@code cluster-<i>} name and
 * where its body is. One process simulates 1,000 Envoys on the server's two cores; building 10,000
 * {@code Any} messages per response for each of them made the load generator, not the server, the
 * bottleneck of a 10,000-cluster connect. Every resource is still located and named; bodies are
 * parsed only where an event checks their content.
 */
final class LightResponse {
  final String typeUrl;
  final String version;
  final String nonce;
  final int size;
  final int count;
  private final byte[] bytes;
  private final int[] index;
  private final int[] bodyOffset;
  private final int[] bodyLength;

  private LightResponse(String typeUrl, String version, String nonce, byte[] bytes, int count,
      int[] index, int[] bodyOffset, int[] bodyLength) {
    this.typeUrl = typeUrl;
    this.version = version;
    this.nonce = nonce;
    this.size = bytes.length;
    this.bytes = bytes;
    this.count = count;
    this.index = index;
    this.bodyOffset = bodyOffset;
    this.bodyLength = bodyLength;
  }

  /** The index i of resource {@code k}'s name {@code cluster-<i>}, or -1. */
  int index(int k) {
    return index[k];
  }

  /** Resource {@code k}'s body (a Cluster or ClusterLoadAssignment), copied out. */
  ByteString body(int k) {
    return ByteString.copyFrom(bytes, bodyOffset[k], bodyLength[k]);
  }

  /** SotW: DiscoveryResponse {version_info=1, resources=2 (Any), type_url=4, nonce=5}. */
  static final MethodDescriptor.Marshaller<LightResponse> SOTW = new Reader(false);
  /**
   * Delta: DeltaDiscoveryResponse {system_version_info=1, resources=2 (Resource: version=1,
   * resource=2 (Any), name=3), type_url=4, nonce=5}.
   */
  static final MethodDescriptor.Marshaller<LightResponse> DELTA = new Reader(true);

  private static final class Reader implements MethodDescriptor.Marshaller<LightResponse> {
    private final boolean delta;

    Reader(boolean delta) {
      this.delta = delta;
    }

    @Override
    public InputStream stream(LightResponse value) {
      throw new UnsupportedOperationException("clients only read responses");
    }

    @Override
    public LightResponse parse(InputStream stream) {
      try {
        return read(stream.readAllBytes(), delta);
      } catch (IOException e) {
        throw Status.INTERNAL.withDescription("unreadable response").withCause(e).asRuntimeException();
      }
    }
  }

  static LightResponse read(byte[] bytes, boolean delta) throws IOException {
    CodedInputStream in = CodedInputStream.newInstance(bytes);
    String typeUrl = "";
    String version = "";
    String nonce = "";
    int n = 0;
    int[] index = new int[16];
    int[] offset = new int[16];
    int[] length = new int[16];
    while (true) {
      int tag = in.readTag();
      if (tag == 0) {
        break;
      }
      switch (WireFormat.getTagFieldNumber(tag)) {
        case 1 -> version = in.readStringRequireUtf8();
        case 4 -> typeUrl = in.readStringRequireUtf8();
        case 5 -> nonce = in.readStringRequireUtf8();
        case 2 -> {
          int len = in.readRawVarint32();
          int start = in.getTotalBytesRead();
          if (n == index.length) {
            index = java.util.Arrays.copyOf(index, n * 2);
            offset = java.util.Arrays.copyOf(offset, n * 2);
            length = java.util.Arrays.copyOf(length, n * 2);
          }
          // SotW: the element is an Any; Delta: a Resource whose field 2 is the Any.
          int anyStart = start;
          int anyLen = len;
          if (delta) {
            long any = field(bytes, start, start + len, 2);
            anyStart = (int) (any >>> 32);
            anyLen = (int) any;
          }
          long body = anyLen < 0 ? -1 : field(bytes, anyStart, anyStart + anyLen, 2); // Any.value
          offset[n] = body < 0 ? 0 : (int) (body >>> 32);
          length[n] = body < 0 ? 0 : (int) body;
          index[n] = body < 0 ? -1 : nameIndex(bytes, offset[n], offset[n] + length[n]);
          n++;
          in.skipRawBytes(len);
        }
        default -> in.skipField(tag);
      }
    }
    return new LightResponse(typeUrl, version, nonce, bytes, n, index, offset, length);
  }

  /** (offset << 32 | length) of the first length-delimited field {@code number} in [from, to), or -1. */
  private static long field(byte[] b, int from, int to, int number) throws IOException {
    CodedInputStream in = CodedInputStream.newInstance(b, from, to - from);
    while (true) {
      int tag = in.readTag();
      if (tag == 0) {
        return -1;
      }
      if (WireFormat.getTagFieldNumber(tag) == number
          && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
        int len = in.readRawVarint32();
        return ((long) (from + in.getTotalBytesRead()) << 32) | len;
      }
      in.skipField(tag);
    }
  }

  private static final byte[] PREFIX = Fleet.PREFIX.getBytes(StandardCharsets.US_ASCII);

  /** The i of a body whose first field (the name: Cluster.name, CLA.cluster_name) is cluster-i. */
  static int nameIndex(byte[] b, int from, int to) throws IOException {
    long name = field(b, from, to, 1);
    if (name < 0) {
      return -1;
    }
    int start = (int) (name >>> 32);
    int len = (int) name;
    if (len <= PREFIX.length || !java.util.Arrays.equals(b, start, start + PREFIX.length, PREFIX, 0, PREFIX.length)) {
      return -1;
    }
    int v = 0;
    for (int i = start + PREFIX.length; i < start + len; i++) {
      int d = b[i] - '0';
      if (d < 0 || d > 9 || v > 100_000_000) {
        return -1;
      }
      v = v * 10 + d;
    }
    return v;
  }
}
