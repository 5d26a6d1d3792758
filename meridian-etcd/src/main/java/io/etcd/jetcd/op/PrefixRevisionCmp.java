package io.etcd.jetcd.op;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.api.Compare;

/**
 * A transaction guard jetcd has no public form for: "no key under PREFIX was created or modified
 * after revision R" (etcd's Compare with a range_end, etcd 3.3+). {@code meridian apply} guards
 * its transaction with it, so the write lands only on the state it diffed. Lives in jetcd's
 * package because {@link Cmp#toCompare} is package-private.
 */
public final class PrefixRevisionCmp extends Cmp {
  private final ByteString prefix;
  private final long revision;

  /** Every key starting with {@code prefix} has a mod revision of at most {@code revision}. */
  public PrefixRevisionCmp(ByteSequence prefix, long revision) {
    super(prefix, Op.LESS, CmpTarget.modRevision(revision + 1));
    this.prefix = ByteString.copyFrom(prefix.getBytes());
    this.revision = revision;
  }

  @Override
  Compare toCompare(ByteSequence namespace) {
    ByteString ns = ByteString.copyFrom(namespace.getBytes());
    ByteString key = ns.concat(prefix);
    return Compare.newBuilder()
        .setKey(key)
        .setRangeEnd(rangeEnd(key))
        .setTarget(Compare.CompareTarget.MOD)
        .setResult(Compare.CompareResult.LESS)
        .setModRevision(revision + 1)
        .build();
  }

  /** The first key after every key that starts with {@code key}: etcd's prefix range end. */
  static ByteString rangeEnd(ByteString key) {
    byte[] end = key.toByteArray();
    for (int i = end.length - 1; i >= 0; i--) {
      if (end[i] != (byte) 0xff) {
        end[i]++;
        return ByteString.copyFrom(end, 0, i + 1);
      }
    }
    return ByteString.copyFrom(new byte[] {0}); // every key
  }
}
