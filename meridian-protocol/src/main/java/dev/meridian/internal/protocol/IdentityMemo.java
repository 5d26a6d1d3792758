package dev.meridian.internal.protocol;

import java.util.function.Function;

/**
 * The answers to the last few questions asked about shared immutable objects (a snapshot's
 * version map, an interned name set, a shared list of changed resources), recognized by identity.
 * After a reload every stream in sync asks the same question about the same object; the first
 * computes the answer, the others reuse it. Thread-safe; bounded: the oldest answer goes first.
 */
final class IdentityMemo<K, V> {
  private final Object[] keys;
  private final Object[] values;
  private int next;

  IdentityMemo(int size) {
    keys = new Object[size];
    values = new Object[size];
  }

  /** The remembered answer for exactly {@code key}, or null. */
  @SuppressWarnings("unchecked")
  synchronized V get(K key) {
    for (int i = 0; i < keys.length; i++) {
      if (keys[i] == key) {
        return (V) values[i];
      }
    }
    return null;
  }

  synchronized void put(K key, V value) {
    keys[next] = key;
    values[next] = value;
    next = (next + 1) % keys.length;
  }

  /** The remembered answer, or {@code compute}'s, computed outside the lock and remembered. */
  V computeIfAbsent(K key, Function<K, V> compute) {
    V v = get(key);
    if (v == null) {
      v = compute.apply(key);
      put(key, v);
    }
    return v;
  }
}
