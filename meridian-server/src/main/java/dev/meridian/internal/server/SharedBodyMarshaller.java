package dev.meridian.internal.server;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.MessageLite;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Function;

/**
 * Writes responses whose resources are a list many clients receive (a whole type: the snapshot's
 * own list of Anys or Delta Resources) from bytes encoded once: the response's other fields, then
 * the shared encoding of its {@code resources} field. Without it each of 1,000 clients connecting
 * to 10,000 clusters re-encodes the same 2 MB (type URLs to UTF-8, length prefixes) on the
 * server's two cores. Field order is free on the wire, so clients parse exactly the same message.
 *
 * <p>A list is recognized by the identity of its elements (the core hands every client the same
 * {@code Any} objects); it is encoded on its second sighting, so a list only one client receives
 * costs nothing extra. Small responses and unrecognized lists take the plain path.
 */
final class SharedBodyMarshaller<M extends MessageLite> implements MethodDescriptor.Marshaller<M> {
  static final int SHARE_FROM = 64; // resources in a response
  private static final int MAX_ENTRIES = 8;
  private static final long MAX_BYTES = 512L << 20;

  private final MethodDescriptor.Marshaller<M> plain;
  private final int field;
  private final Function<M, List<? extends MessageLite>> resources;
  private final Function<M, M> withoutResources;
  /** Most recently used last. Guarded by itself. */
  private final List<Entry> entries = new ArrayList<>();

  SharedBodyMarshaller(MethodDescriptor.Marshaller<M> plain, int field,
      Function<M, List<? extends MessageLite>> resources, Function<M, M> withoutResources) {
    this.plain = plain;
    this.field = field;
    this.resources = resources;
    this.withoutResources = withoutResources;
  }

  static SharedBodyMarshaller<DiscoveryResponse> sotw(MethodDescriptor.Marshaller<DiscoveryResponse> plain) {
    return new SharedBodyMarshaller<>(plain, DiscoveryResponse.RESOURCES_FIELD_NUMBER,
        DiscoveryResponse::getResourcesList, r -> r.toBuilder().clearResources().build());
  }

  static SharedBodyMarshaller<DeltaDiscoveryResponse> delta(
      MethodDescriptor.Marshaller<DeltaDiscoveryResponse> plain) {
    return new SharedBodyMarshaller<>(plain, DeltaDiscoveryResponse.RESOURCES_FIELD_NUMBER,
        DeltaDiscoveryResponse::getResourcesList, r -> r.toBuilder().clearResources().build());
  }

  @Override
  public InputStream stream(M message) {
    List<? extends MessageLite> list = resources.apply(message);
    if (list.size() < SHARE_FROM) {
      return plain.stream(message);
    }
    byte[] body = body(list);
    if (body == null) {
      return plain.stream(message);
    }
    return new Concat(withoutResources.apply(message).toByteArray(), body);
  }

  /**
   * The encoded size of {@code message}, as {@link #stream} writes it: for a whole type already
   * encoded, its header's size plus the shared body's, without a walk over its resources (a
   * message's own size is worked out per message: per client).
   */
  int serializedSize(M message) {
    List<? extends MessageLite> list = resources.apply(message);
    if (list.size() >= SHARE_FROM) {
      int body = -1;
      synchronized (entries) {
        for (int i = entries.size() - 1; i >= 0; i--) {
          Entry e = entries.get(i);
          if (e.elements == list && e.body != null) {
            body = e.body.length;
            break;
          }
        }
      }
      if (body >= 0) {
        return withoutResources.apply(message).getSerializedSize() + body;
      }
    }
    return message.getSerializedSize();
  }

  @Override
  public M parse(InputStream stream) {
    return plain.parse(stream);
  }

  /** The shared encoding of {@code list}, or null if it is not (yet) a list seen twice. */
  private byte[] body(List<? extends MessageLite> list) {
    Entry seen = null;
    synchronized (entries) {
      for (int i = entries.size() - 1; i >= 0; i--) {
        Entry e = entries.get(i);
        if (e.sameElements(list)) {
          entries.remove(i);
          entries.add(e);
          if (e.body != null) {
            return e.body;
          }
          seen = e;
          break;
        }
      }
      if (seen == null) {
        remember(new Entry(list)); // a message's list: immutable
        return null;
      }
    }
    byte[] body = encode(seen.elements); // the second sighting: encode outside the lock
    synchronized (entries) {
      if (seen.body == null) {
        seen.body = body;
        trim();
      }
      return seen.body;
    }
  }

  private void remember(Entry e) {
    entries.add(e);
    trim();
  }

  private void trim() {
    long bytes = 0;
    for (Entry e : entries) {
      bytes += e.body == null ? 0 : e.body.length;
    }
    Iterator<Entry> it = entries.iterator();
    while (it.hasNext() && (entries.size() > MAX_ENTRIES || bytes > MAX_BYTES)) {
      Entry e = it.next();
      bytes -= e.body == null ? 0 : e.body.length;
      it.remove();
    }
  }

  private byte[] encode(List<? extends MessageLite> list) {
    int size = 0;
    for (MessageLite m : list) {
      size += CodedOutputStream.computeMessageSize(field, m);
    }
    byte[] out = new byte[size];
    CodedOutputStream o = CodedOutputStream.newInstance(out);
    try {
      for (MessageLite m : list) {
        o.writeMessage(field, m);
      }
      o.checkNoSpaceLeft();
    } catch (IOException e) {
      throw new IllegalStateException("encoding into an array of the computed size", e);
    }
    return out;
  }

  private static final class Entry {
    final List<? extends MessageLite> elements;
    byte[] body;

    Entry(List<? extends MessageLite> elements) {
      this.elements = elements;
    }

    /** The same objects in the same order (identity: immutable messages, shared by the core). */
    boolean sameElements(List<? extends MessageLite> other) {
      if (other == elements) {
        return true; // the core's one list, shared by every client's response (TypeSnapshot)
      }
      int n = elements.size();
      if (other.size() != n || other.get(0) != elements.get(0) || other.get(n - 1) != elements.get(n - 1)) {
        return false;
      }
      for (int i = 1; i < n - 1; i++) {
        if (other.get(i) != elements.get(i)) {
          return false;
        }
      }
      return true;
    }
  }

  /** head, then body; sized up front and drained without copying into an intermediate array. */
  static final class Concat extends InputStream implements KnownLength, Drainable {
    private final byte[] head;
    private final byte[] body;
    private int pos;

    Concat(byte[] head, byte[] body) {
      this.head = head;
      this.body = body;
    }

    @Override
    public int available() {
      return head.length + body.length - pos;
    }

    @Override
    public int read() {
      if (pos < head.length) {
        return head[pos++] & 0xff;
      }
      if (pos < head.length + body.length) {
        return body[pos++ - head.length] & 0xff;
      }
      return -1;
    }

    @Override
    public int read(byte[] b, int off, int len) {
      if (len == 0) {
        return 0;
      }
      int total = head.length + body.length;
      if (pos >= total) {
        return -1;
      }
      int n = 0;
      if (pos < head.length) {
        int k = Math.min(len, head.length - pos);
        System.arraycopy(head, pos, b, off, k);
        pos += k;
        n += k;
      }
      if (n < len && pos >= head.length && pos < total) {
        int k = Math.min(len - n, total - pos);
        System.arraycopy(body, pos - head.length, b, off + n, k);
        pos += k;
        n += k;
      }
      return n;
    }

    @Override
    public int drainTo(OutputStream target) throws IOException {
      int n = available();
      if (pos < head.length) {
        target.write(head, pos, head.length - pos);
        target.write(body);
      } else {
        target.write(body, pos - head.length, body.length - (pos - head.length));
      }
      pos = head.length + body.length;
      return n;
    }
  }
}
