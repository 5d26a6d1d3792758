package dev.meridian.bench;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * What a simulated client needs of a (Delta)DiscoveryResponse, read straight from its bytes: type
 * URL, version, nonce, size, and for each resource the index of its {@code cluster-<i>} name and
 * where its body is. One process simulates 1,000 Envoys on the server's two cores; building 10,000
 * {@code Any} messages per response for each of them made the load generator, not the server, the
 * bottleneck of a 10,000-cluster connect. Every resource is still located and named; bodies are
 * parsed only where an event checks their content.
 *
 * <p>The wire format is walked by hand (tags, varints, lengths) and a response read from gRPC
 * lands in a buffer that its event-loop thread reuses: with protobuf's CodedInputStream per field
 * and a fresh array per response (zeroed, then filled in chunks and copied again), reading 2.8 GB
 * per 1,000-client connect cost the load generator a quarter of its CPU (docs/benchmarks.md,
 * round 6), CPU the server under test then lacked. So a response read by {@link #SOTW} or {@link
 * #DELTA} is a view, valid until the next response is read on the same thread: clients use it
 * within {@code onNext} (gRPC calls it right after the parse, on that thread), and {@link #body}
 * fails rather than read a reused buffer.
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
  /** Delta: where each resource's Resource message is (its version read on demand); else null. */
  private final int[] resourceOffset;
  private final int[] resourceLength;
  /** The reuse of {@link #bytes} this view was read in; -1: the bytes are its own. */
  private final long reuse;
  private final Scratch scratch;

  private LightResponse(String typeUrl, String version, String nonce, byte[] bytes, int size,
      int count, int[] index, int[] bodyOffset, int[] bodyLength, int[] resourceOffset,
      int[] resourceLength, Scratch scratch) {
    this.typeUrl = typeUrl;
    this.version = version;
    this.nonce = nonce;
    this.size = size;
    this.bytes = bytes;
    this.count = count;
    this.index = index;
    this.bodyOffset = bodyOffset;
    this.bodyLength = bodyLength;
    this.resourceOffset = resourceOffset;
    this.resourceLength = resourceLength;
    this.scratch = scratch;
    this.reuse = scratch == null ? -1 : scratch.reads;
  }

  /** The index i of resource {@code k}'s name {@code cluster-<i>}, or -1. */
  int index(int k) {
    return index[k];
  }

  /** Resource {@code k}'s body (a Cluster or ClusterLoadAssignment), copied out. */
  ByteString body(int k) {
    if (scratch != null && scratch.reads != reuse) {
      throw new IllegalStateException("response read after its buffer was reused");
    }
    return ByteString.copyFrom(bytes, bodyOffset[k], bodyLength[k]);
  }

  /**
   * Delta: resource {@code k}'s {@code Resource.version}, read now (only clients that keep versions
   * for a reconnect's {@code initial_resource_versions} ask); "" if none, null for SotW.
   */
  String version(int k) throws IOException {
    if (resourceOffset == null) {
      return null;
    }
    if (scratch != null && scratch.reads != reuse) {
      throw new IllegalStateException("response read after its buffer was reused");
    }
    long v = field(bytes, resourceOffset[k], resourceOffset[k] + resourceLength[k], 1);
    return v < 0 ? "" : new String(bytes, (int) (v >>> 32), (int) v, StandardCharsets.UTF_8);
  }

  /** SotW: DiscoveryResponse {version_info=1, resources=2 (Any), type_url=4, nonce=5}. */
  static final MethodDescriptor.Marshaller<LightResponse> SOTW = new Reader(false);
  /**
   * Delta: DeltaDiscoveryResponse {system_version_info=1, resources=2 (Resource: version=1,
   * resource=2 (Any), name=3), type_url=4, nonce=5}.
   */
  static final MethodDescriptor.Marshaller<LightResponse> DELTA = new Reader(true);

  /** A thread's reused read buffer, and how often it was filled. */
  private static final class Scratch {
    byte[] buffer = new byte[64 * 1024];
    long reads;
  }

  private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

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
        if (!(stream instanceof KnownLength)) {
          byte[] b = stream.readAllBytes();
          return read(b, b.length, delta, null);
        }
        int n = stream.available(); // gRPC's message stream: exactly the message's length
        Scratch s = SCRATCH.get();
        if (s.buffer.length < n) {
          s.buffer = new byte[Math.max(n, s.buffer.length * 2)];
        }
        s.reads++;
        if (stream.readNBytes(s.buffer, 0, n) != n || stream.read() != -1) {
          throw new IOException("message length differs from its known length " + n);
        }
        return read(s.buffer, n, delta, s);
      } catch (IOException e) {
        throw Status.INTERNAL.withDescription("unreadable response").withCause(e).asRuntimeException();
      }
    }
  }

  /** Reads a whole response from its own bytes (tests, and streams of unknown length). */
  static LightResponse read(byte[] bytes, boolean delta) throws IOException {
    return read(bytes, bytes.length, delta, null);
  }

  private static LightResponse read(byte[] bytes, int size, boolean delta, Scratch scratch)
      throws IOException {
    String typeUrl = "";
    String version = "";
    String nonce = "";
    int n = 0;
    int[] index = new int[16];
    int[] offset = new int[16];
    int[] length = new int[16];
    int[] resOffset = delta ? new int[16] : null;
    int[] resLength = delta ? new int[16] : null;
    Wire in = new Wire(bytes, 0, size);
    while (in.more()) {
      int tag = in.varint32();
      int field = tag >>> 3;
      if ((tag & 7) != 2 || field != 1 && field != 2 && field != 4 && field != 5) {
        in.skip(tag);
        continue;
      }
      int len = in.varint32();
      int start = in.take(len);
      switch (field) {
        case 1 -> version = new String(bytes, start, len, StandardCharsets.UTF_8);
        case 4 -> typeUrl = new String(bytes, start, len, StandardCharsets.UTF_8);
        case 5 -> nonce = new String(bytes, start, len, StandardCharsets.UTF_8);
        default -> {
          if (n == index.length) {
            index = Arrays.copyOf(index, n * 2);
            offset = Arrays.copyOf(offset, n * 2);
            length = Arrays.copyOf(length, n * 2);
            if (delta) {
              resOffset = Arrays.copyOf(resOffset, n * 2);
              resLength = Arrays.copyOf(resLength, n * 2);
            }
          }
          if (delta) {
            resOffset[n] = start;
            resLength[n] = len;
          }
          // SotW: the element is an Any; Delta: a Resource whose field 2 is the Any.
          long any = delta ? field(bytes, start, start + len, 2) : ((long) start << 32) | len;
          long body = any < 0 ? -1 : field(bytes, (int) (any >>> 32), (int) (any >>> 32) + (int) any, 2);
          offset[n] = body < 0 ? 0 : (int) (body >>> 32);
          length[n] = body < 0 ? 0 : (int) body;
          index[n] = body < 0 ? -1 : nameIndex(bytes, offset[n], offset[n] + length[n]);
          n++;
        }
      }
    }
    return new LightResponse(typeUrl, version, nonce, bytes, size, n, index, offset, length,
        resOffset, resLength, scratch);
  }

  /** (offset << 32 | length) of the first length-delimited field {@code number} in [from, to), or -1. */
  private static long field(byte[] b, int from, int to, int number) throws IOException {
    Wire in = new Wire(b, from, to);
    while (in.more()) {
      int tag = in.varint32();
      if (tag >>> 3 == number && (tag & 7) == 2) {
        int len = in.varint32();
        return ((long) in.take(len) << 32) | len;
      }
      in.skip(tag);
    }
    return -1;
  }

  /** A cursor over protobuf wire format in {@code b[pos, end)}: only what the reader needs. */
  private static final class Wire {
    private final byte[] b;
    private int pos;
    private final int end;

    Wire(byte[] b, int from, int to) {
      this.b = b;
      this.pos = from;
      this.end = to;
    }

    boolean more() {
      return pos < end;
    }

    int varint32() throws IOException {
      int result = 0;
      for (int shift = 0; shift < 32; shift += 7) {
        byte x = next();
        result |= (x & 0x7f) << shift;
        if (x >= 0) {
          return result;
        }
      }
      // A negative int32 is sign-extended to ten bytes; the five read hold all its bits.
      for (int i = 0; i < 5; i++) {
        if (next() >= 0) {
          return result;
        }
      }
      throw new InvalidProtocolBufferException("malformed varint");
    }

    /** Claims {@code len} bytes; returns where they start. */
    int take(int len) throws IOException {
      if (len < 0 || len > end - pos) {
        throw new InvalidProtocolBufferException("length " + len + " past the message's end");
      }
      int start = pos;
      pos += len;
      return start;
    }

    /** Skips the value of a field whose tag was just read. */
    void skip(int tag) throws IOException {
      switch (tag & 7) {
        case 0 -> {
          while (next() < 0) {
            // continuation bits
          }
        }
        case 1 -> take(8);
        case 2 -> take(varint32());
        case 5 -> take(4);
        default -> throw new InvalidProtocolBufferException("unsupported wire type in tag " + tag);
      }
    }

    private byte next() throws IOException {
      if (pos >= end) {
        throw new InvalidProtocolBufferException("truncated message");
      }
      return b[pos++];
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
    if (len <= PREFIX.length || !Arrays.equals(b, start, start + PREFIX.length, PREFIX, 0, PREFIX.length)) {
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
