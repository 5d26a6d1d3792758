package dev.meridian.internal.pgv;

import com.google.protobuf.Descriptors.Descriptor;
import java.util.Set;

/** {@code google.protobuf.*Value}: a field of one carries the rules of the scalar it wraps. */
final class Wrappers {
  private static final Set<String> NAMES = Set.of("google.protobuf.DoubleValue",
      "google.protobuf.FloatValue", "google.protobuf.Int64Value", "google.protobuf.UInt64Value",
      "google.protobuf.Int32Value", "google.protobuf.UInt32Value", "google.protobuf.BoolValue",
      "google.protobuf.StringValue", "google.protobuf.BytesValue");

  private Wrappers() {}

  static boolean isWrapper(Descriptor d) {
    return NAMES.contains(d.getFullName());
  }
}
