package dev.meridian.internal.server;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import com.google.protobuf.WireFormat;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Parses xDS requests so that a large list of resource names is decoded once for every client that
 * sends the same bytes. A SotW client repeats its whole subscription in every request, ACKs
 * included (spec "How the client specifies what resources to return"): 1,000 clients ACKing an EDS
 * push for 10,000 clusters would otherwise decode 10 million strings. A Delta client names its
 * whole subscription once per stream and again when warming clusters re-subscribe their endpoints
 * (spec "Incremental xDS"): the same 10,000 names from each of 1,000 clients. Here the encoded
 * list is looked up by content in a small cache and the clients share one immutable list of
 * strings, which also lets {@code Subscription} recognize an unchanged list by identity.
 *
 * <p>The message is the same as the plain protobuf parse would give; only requests whose names
 * take at least {@link #SHARE_FROM} bytes, in one run of the names field, take this path. The
 * names field is number 3 in both {@code DiscoveryRequest.resource_names} and
 * {@code DeltaDiscoveryRequest.resource_names_subscribe}.
 *
 * @param <T> the request message
 */
final class SharedNamesMarshaller<T extends Message> implements MethodDescriptor.Marshaller<T> {
  static final int SHARE_FROM = 4096;
  private static final int MAX_ENTRIES = 64;
  private static final long MAX_BYTES = 64L << 20;
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /**
   * How one request type is parsed, which field holds its names, which fields each carry one
   * resource name (counted against the bound), and the message that stands for a refused request.
   */
  private record Shape<T>(int namesField, Parser<T> parser, int[] counted, int versionsField,
      java.util.function.ToIntFunction<T> namesOf, T refused) {}

  /**
   * Stands in for a request this marshaller refused (too many names, or not protobuf): the stream
   * that receives it ends with {@link #refusal}'s status. A refusal is not thrown: grpc-java
   * answers an exception from a marshaller UNKNOWN ("Application error processing RPC") and logs
   * its stack trace, once per request.
   */
  private static final DiscoveryRequest REFUSED_SOTW =
      DiscoveryRequest.newBuilder().setTypeUrl("meridian.internal/refused").build();
  private static final DeltaDiscoveryRequest REFUSED_DELTA =
      DeltaDiscoveryRequest.newBuilder().setTypeUrl("meridian.internal/refused").build();
  /**
   * What the request parsed last on this thread leaves for its stream: why it was refused, or
   * what it holds of the server's request memory. gRPC hands a request to its stream on the
   * thread that parsed it.
   */
  private static final ThreadLocal<Handoff> HANDOFF = ThreadLocal.withInitial(Handoff::new);

  private static final class Handoff {
    Refusal refusal;
    RequestMemory memory;
    long held;
    /** Bytes of the request's names found in the cache: decoded once, held by the cache. */
    int shared;
  }

  /** Bytes of the server's request memory a request holds until its stream has handled it. */
  record Held(RequestMemory memory, long bytes) {
    void release() {
      memory.release(bytes);
    }
  }

  private final MethodDescriptor.Marshaller<T> plain;
  private final Shape<T> shape;
  private final Cache<Hit<T>> cache = new Cache<>();
  /** The list last looked up (any thread's: a hint, checked by content before use). */
  private volatile Hit<T> last;
  /** Per thread (gRPC parses on its transport threads): the buffer large requests are read into. */
  private final ThreadLocal<byte[]> scratch = new ThreadLocal<>();
  /** Requests up to this size use the reused buffer; larger ones (rare) get their own array. */
  static final int SCRATCH_MAX = 1 << 20;

  /** Resource names a request may carry ({@code --max-resource-names}). */
  private final int maxNames;
  /** The requests the server holds at once ({@code --max-request-memory}); null: not counted. */
  private final RequestMemory memory;

  private SharedNamesMarshaller(MethodDescriptor.Marshaller<T> plain, Shape<T> shape,
      int maxNames, RequestMemory memory) {
    this.plain = plain;
    this.shape = shape;
    this.maxNames = maxNames;
    this.memory = memory;
  }

  /** SotW: {@code resource_names}, repeated in every request. */
  static SharedNamesMarshaller<DiscoveryRequest> sotw(
      MethodDescriptor.Marshaller<DiscoveryRequest> plain, int maxNames) {
    return sotw(plain, maxNames, null);
  }

  /** SotW, each request counted against {@code memory} until its stream has handled it. */
  static SharedNamesMarshaller<DiscoveryRequest> sotw(
      MethodDescriptor.Marshaller<DiscoveryRequest> plain, int maxNames, RequestMemory memory) {
    return new SharedNamesMarshaller<>(plain, new Shape<>(
        DiscoveryRequest.RESOURCE_NAMES_FIELD_NUMBER, DiscoveryRequest.parser(),
        new int[] {DiscoveryRequest.RESOURCE_NAMES_FIELD_NUMBER,
            DiscoveryRequest.RESOURCE_LOCATORS_FIELD_NUMBER}, 0,
        dev.meridian.internal.protocol.SotwStream::namesOf, REFUSED_SOTW), maxNames, memory);
  }

  /** Delta: {@code resource_names_subscribe}. */
  static SharedNamesMarshaller<DeltaDiscoveryRequest> delta(
      MethodDescriptor.Marshaller<DeltaDiscoveryRequest> plain, int maxNames) {
    return delta(plain, maxNames, null);
  }

  /** Delta, each request counted against {@code memory} until its stream has handled it. */
  static SharedNamesMarshaller<DeltaDiscoveryRequest> delta(
      MethodDescriptor.Marshaller<DeltaDiscoveryRequest> plain, int maxNames,
      RequestMemory memory) {
    return new SharedNamesMarshaller<>(plain, new Shape<>(
        DeltaDiscoveryRequest.RESOURCE_NAMES_SUBSCRIBE_FIELD_NUMBER, DeltaDiscoveryRequest.parser(),
        new int[] {DeltaDiscoveryRequest.RESOURCE_NAMES_SUBSCRIBE_FIELD_NUMBER,
            DeltaDiscoveryRequest.RESOURCE_NAMES_UNSUBSCRIBE_FIELD_NUMBER,
            DeltaDiscoveryRequest.RESOURCE_LOCATORS_SUBSCRIBE_FIELD_NUMBER,
            DeltaDiscoveryRequest.RESOURCE_LOCATORS_UNSUBSCRIBE_FIELD_NUMBER},
        DeltaDiscoveryRequest.INITIAL_RESOURCE_VERSIONS_FIELD_NUMBER,
        dev.meridian.internal.protocol.DeltaStream::namesOf, REFUSED_DELTA),
        maxNames, memory);
  }

  /**
   * A request refused: the status its stream ends with, and the bound that refused it (the
   * {@code meridian_bounds_refused_total} label), or null when no bound did (not protobuf).
   */
  record Refusal(Status status, String bound) {}

  /**
   * Why {@code request} was refused by the marshaller that parsed it on this thread, or null: a
   * real request. Call from the stream's {@code onNext}, on the thread that parsed it.
   */
  static Refusal refusal(Object request) {
    if (request != REFUSED_SOTW && request != REFUSED_DELTA) {
      return null;
    }
    Handoff h = HANDOFF.get();
    Refusal why = h.refusal;
    h.refusal = null;
    return why != null ? why
        : new Refusal(Status.INTERNAL.withDescription("the request was refused"), null);
  }

  /**
   * What the request parsed last on this thread holds of the server's request memory, taken by
   * its stream (which releases it once the request is handled); null: nothing.
   */
  static Held held() {
    Handoff h = HANDOFF.get();
    if (h.held == 0) {
      return null;
    }
    Held held = new Held(h.memory, h.held);
    h.held = 0;
    return held;
  }

  private T refuse(Status why) {
    return refuse(why, null);
  }

  private T refuse(Status why, String bound) {
    HANDOFF.get().refusal = new Refusal(why, bound);
    return shape.refused();
  }

  @Override
  public InputStream stream(T value) {
    return plain.stream(value);
  }

  @Override
  public T parse(InputStream stream) {
    Handoff h = HANDOFF.get();
    if (h.held != 0) {
      h.memory.release(h.held); // parsed before and taken by no stream (its call ended)
      h.held = 0;
    }
    h.refusal = null;
    h.shared = 0;
    long reserved = 0;
    T request = null;
    try {
      if (stream instanceof io.grpc.KnownLength) {
        int length = stream.available();
        if (memory != null) {
          if (!memory.reserve(length)) {
            return refuse(Status.RESOURCE_EXHAUSTED.withDescription(memory.refusal(length)),
                "max_request_memory");
          }
          reserved = length;
        }
        if (length >= SHARE_FROM && length <= SCRATCH_MAX) {
          // A large request (a SotW ACK repeating 10,000 names is ~200 KB) is read into this
          // thread's reused buffer: nothing of it outlives the parse, and a fresh 200 KB array
          // per ACK cost its zeroing and, on a new heap, its page faults.
          byte[] scratch = this.scratch.get();
          if (scratch == null || scratch.length < length) {
            scratch = new byte[Math.max(length, Math.min(SCRATCH_MAX, 2 * length))];
            this.scratch.set(scratch);
          }
          readFully(stream, scratch, length);
          int over = overBound(scratch, length);
          request = over > 0 ? tooMany() : recounted(over, parseSharing(scratch, length));
        } else {
          byte[] bytes = new byte[length];
          readFully(stream, bytes, length);
          int over = overBound(bytes, length);
          request = over > 0 ? tooMany() : recounted(over, parse(bytes, length));
        }
      } else {
        byte[] bytes = stream.readAllBytes();
        if (memory != null) {
          if (!memory.reserve(bytes.length)) {
            return refuse(Status.RESOURCE_EXHAUSTED.withDescription(memory.refusal(bytes.length)),
                "max_request_memory");
          }
          reserved = bytes.length;
        }
        int over = overBound(bytes, bytes.length);
        request = over > 0 ? tooMany() : recounted(over, parse(bytes, bytes.length));
      }
      return request;
    } catch (InvalidProtocolBufferException e) {
      return request = refuse(Status.INTERNAL.withDescription("the request is not a valid "
          + shape.refused().getDescriptorForType().getName() + ": " + e.getMessage()));
    } catch (IOException e) {
      return request = refuse(Status.INTERNAL.withDescription("reading the request: "
          + e.getMessage()));
    } catch (RuntimeException e) {
      // grpc-java's own refusals while reading (a compressed request that inflates past the
      // message size): said as a status, not as an application error with a stack trace.
      return request = refuse(Status.fromThrowable(e));
    } finally {
      if (reserved != 0) {
        // Names decoded once for every client that sends them are the cache's, not this one's.
        long kept = request == null || request == shape.refused() ? 0 : reserved - h.shared;
        memory.release(reserved - kept);
        if (kept != 0) {
          h.memory = memory;
          h.held = kept;
        }
      }
    }
  }

  /**
   * Whether the request carries more resource names than allowed: 1 yes, 0 no, -1 the count
   * cannot tell without decoding (a group field, which proto3 requests do not have, or bytes that
   * are no message: the parse then says what is wrong). Each name takes at least two bytes (a
   * tag and a length), so a request under twice the bound is not counted at all.
   */
  private int overBound(byte[] bytes, int length) {
    if (length / 2 <= maxNames) {
      return 0;
    }
    int n = countNames(bytes, length, shape.counted(), shape.versionsField(), maxNames);
    return n < 0 ? -1 : n > maxNames ? 1 : 0;
  }

  /** {@code request}, or a refusal if its names were not counted before and are too many. */
  private T recounted(int over, T request) {
    return over < 0 && request != shape.refused()
        && shape.namesOf().applyAsInt(request) > maxNames ? tooMany() : request;
  }

  private T tooMany() {
    return refuse(Status.RESOURCE_EXHAUSTED.withDescription("this request names more than "
        + maxNames + " resources; the server allows at most " + maxNames
        + " per request and per stream (--max-resource-names)"), "max_resource_names");
  }

  /**
   * The names a request carries as the protocol core counts them ({@code XdsStream.namesIn}):
   * the top-level fields of {@code bytes[0, length)} whose number is in {@code counted}, or the
   * fields numbered {@code versionsField} (Delta's resumed versions, which a reconnect sends
   * besides the same names subscribed) if more; counting stops past {@code stopAfter}. Nothing is
   * decoded. Fields are counted as they occur (a map key repeated counts each time). -1: the
   * count cannot tell (a group field, or a message that breaks off before its end).
   */
  static int countNames(byte[] bytes, int length, int[] counted, int versionsField,
      int stopAfter) {
    int n = 0;
    int versions = 0;
    int pos = 0;
    while (pos < length && n <= stopAfter && versions <= stopAfter) {
      long tag = 0;
      for (int shift = 0; ; shift += 7) {
        if (pos >= length || shift > 63) {
          return -1;
        }
        byte b = bytes[pos++];
        tag |= (long) (b & 0x7f) << shift;
        if (b >= 0) {
          break;
        }
      }
      int field = (int) (tag >>> 3);
      switch ((int) (tag & 7)) {
        case WireFormat.WIRETYPE_VARINT -> {
          while (pos < length && bytes[pos] < 0) {
            pos++;
          }
          pos++;
        }
        case WireFormat.WIRETYPE_FIXED64 -> pos += 8;
        case WireFormat.WIRETYPE_FIXED32 -> pos += 4;
        case WireFormat.WIRETYPE_LENGTH_DELIMITED -> {
          long size = 0;
          for (int shift = 0; ; shift += 7) {
            if (pos >= length || shift > 63) {
              return -1;
            }
            byte b = bytes[pos++];
            size |= (long) (b & 0x7f) << shift;
            if (b >= 0) {
              break;
            }
          }
          if (size < 0 || size > length - pos) {
            return -1;
          }
          pos += (int) size;
        }
        default -> {
          return -1; // a group (or no wire type): protobuf's parse decides
        }
      }
      if (versionsField != 0 && field == versionsField) {
        versions++;
        continue;
      }
      for (int c : counted) {
        if (c == field) {
          n++;
          break;
        }
      }
    }
    return pos > length ? -1 : Math.max(n, versions);
  }

  private T parse(byte[] bytes, int length) throws InvalidProtocolBufferException {
    return length < SHARE_FROM ? shape.parser().parseFrom(bytes, 0, length)
        : parseSharing(bytes, length);
  }

  private static void readFully(InputStream stream, byte[] into, int length) throws IOException {
    int n = stream.readNBytes(into, 0, length);
    if (n < length) {
      throw new IOException("the request ended after " + n + " of " + length + " bytes");
    }
  }

  /**
   * Parses {@code bytes[0, length)}; the result keeps no reference to {@code bytes} (a thread's
   * reused buffer): protobuf copies what it parses, and cached names are copied out first.
   */
  T parseSharing(byte[] bytes, int length) throws InvalidProtocolBufferException {
    // Find the run of names fields; every other field is parsed as usual.
    int namesTag = shape.namesField() << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED;
    int from = -1;
    int to = -1;
    int pos = 0;
    try {
      while (pos < length) {
        CodedInputStream in = CodedInputStream.newInstance(bytes, pos, length - pos);
        int tag = in.readTag(); // not 0: pos < length, and a zero tag throws
        if (WireFormat.getTagFieldNumber(tag) != shape.namesField()) {
          in.skipField(tag);
          pos += in.getTotalBytesRead();
          continue;
        }
        if (from >= 0 && to != pos) {
          return shape.parser().parseFrom(bytes, 0, length); // two runs: rare, the plain path
        }
        if (from < 0) {
          from = pos;
        }
        int end = skipNames(bytes, pos, length, namesTag);
        if (end <= pos) {
          // Malformed, or a tag spelled in more bytes than it needs: protobuf reads it (or says
          // what is wrong).
          return shape.parser().parseFrom(bytes, 0, length);
        }
        pos = to = end;
      }
    } catch (IOException e) {
      throw e instanceof InvalidProtocolBufferException ipbe ? ipbe
          : new InvalidProtocolBufferException(e);
    }
    if (from < 0 || to - from < SHARE_FROM) {
      return shape.parser().parseFrom(bytes, 0, length);
    }
    byte[] rest = new byte[length - (to - from)];
    System.arraycopy(bytes, 0, rest, 0, from);
    System.arraycopy(bytes, to, rest, from, length - to);
    // The rest (node, version, nonce, ...) merged into the cached names-only message: the builder
    // adopts its names list, so no per-request copy of 10,000 names.
    @SuppressWarnings("unchecked")
    T request = (T) names(bytes, from, to).toBuilder().mergeFrom(rest).build();
    return request;
  }

  /** A message holding only the names in {@code bytes[from, to)}, shared by equal byte runs. */
  private T names(byte[] bytes, int from, int to) throws InvalidProtocolBufferException {
    // The usual case, 1,000 clients ACKing with the same list: the last list looked up matches,
    // and comparing the bytes costs less than hashing them.
    Hit<T> last = this.last;
    if (last != null && last.key.sameBytes(bytes, from, to)) {
      HANDOFF.get().shared = to - from;
      return last.names;
    }
    Key probe = new Key(bytes, from, to);
    synchronized (cache) {
      Hit<T> hit = cache.get(probe);
      if (hit != null) {
        this.last = hit;
        HANDOFF.get().shared = to - from;
        return hit.names();
      }
    }
    byte[] own = Arrays.copyOfRange(bytes, from, to);
    Hit<T> made = new Hit<>(new Key(own, 0, own.length), shape.parser().parseFrom(own));
    synchronized (cache) {
      cache.put(made.key(), made);
    }
    this.last = made;
    return made.names();
  }

  /**
   * The end of the run of names fields that starts at {@code pos} (each the one-byte tag of field
   * 3, a varint length and the name), or -1 if a length runs past {@code length}. Stops at the
   * first other byte: whatever follows is read as a field again.
   */
  static int skipNames(byte[] bytes, int pos, int length, int namesTag) {
    while (pos < length && bytes[pos] == namesTag) {
      pos++;
      int size = 0;
      for (int shift = 0; ; shift += 7) {
        if (pos >= length || shift > 28) {
          return -1;
        }
        byte b = bytes[pos++];
        size |= (b & 0x7f) << shift;
        if (b >= 0) {
          break;
        }
      }
      if (size < 0 || size > length - pos) {
        return -1;
      }
      pos += size;
    }
    return pos;
  }

  /** A list last looked up, and its message. */
  private record Hit<T>(Key key, T names) {}

  /** Recently seen encoded name lists, least recently used first out; bounded in count and bytes. */
  private static final class Cache<T> extends LinkedHashMap<Key, T> {
    long bytes;

    Cache() {
      super(16, 0.75f, true);
    }

    @Override
    public T put(Key key, T value) {
      T previous = super.put(key, value);
      if (previous == null) {
        bytes += key.to - key.from;
      }
      return previous;
    }

    @Override
    protected boolean removeEldestEntry(Map.Entry<Key, T> eldest) {
      if (size() > MAX_ENTRIES || bytes > MAX_BYTES) {
        bytes -= eldest.getKey().to - eldest.getKey().from;
        return true;
      }
      return false;
    }
  }

  /** A byte range compared by content. */
  private static final class Key {
    final byte[] bytes;
    final int from;
    final int to;
    final int hash;

    Key(byte[] bytes, int from, int to) {
      this.bytes = bytes;
      this.from = from;
      this.to = to;
      this.hash = hash(bytes, from, to);
    }

    /** Eight bytes a step: this runs over ~170 KB per request for 10,000 names. */
    private static int hash(byte[] b, int from, int to) {
      long h = to - from;
      int i = from;
      for (; i + 8 <= to; i += 8) {
        h = (h ^ (long) LONGS.get(b, i)) * 0x9E3779B97F4A7C15L;
        h ^= h >>> 29;
      }
      for (; i < to; i++) {
        h = (h ^ b[i]) * 0x9E3779B97F4A7C15L;
      }
      return (int) (h ^ (h >>> 32));
    }

    boolean sameBytes(byte[] other, int otherFrom, int otherTo) {
      return to - from == otherTo - otherFrom
          && Arrays.equals(bytes, from, to, other, otherFrom, otherTo);
    }

    @Override
    public int hashCode() {
      return hash;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && k.hash == hash && sameBytes(k.bytes, k.from, k.to);
    }
  }
}
