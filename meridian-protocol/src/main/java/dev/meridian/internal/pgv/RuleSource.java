package dev.meridian.internal.pgv;

import com.google.protobuf.DescriptorProtos.FieldOptions;
import com.google.protobuf.DescriptorProtos.MessageOptions;
import com.google.protobuf.DescriptorProtos.OneofOptions;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.ExtensionRegistry;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.pgv.validate.Validate;
import io.envoyproxy.pgv.validate.Validate.FieldRules;

/**
 * Reads PGV's options off descriptors. Generated descriptors carry them as extensions; descriptors
 * built at run time from a {@code FileDescriptorSet} parsed without PGV's extensions carry them as
 * unknown fields, which are parsed again here with an extension registry that knows them.
 */
final class RuleSource {
  private final ExtensionRegistry registry = ExtensionRegistry.newInstance();

  RuleSource() {
    Validate.registerAllExtensions(registry);
  }

  /** The field's rules; null when it has none. */
  FieldRules rules(FieldDescriptor fd) {
    FieldOptions o = fd.getOptions();
    if (o.hasExtension(Validate.rules)) {
      return o.getExtension(Validate.rules);
    }
    if (o.getUnknownFields().hasField(Validate.RULES_FIELD_NUMBER)) {
      try {
        FieldOptions again = FieldOptions.parseFrom(o.toByteString(), registry);
        if (again.hasExtension(Validate.rules)) {
          return again.getExtension(Validate.rules);
        }
      } catch (InvalidProtocolBufferException e) {
        throw new IllegalArgumentException(
            "unreadable validation rules on " + fd.getFullName() + ": " + e.getMessage(), e);
      }
    }
    return null;
  }

  /** {@code validate.disabled} or {@code validate.ignored}: no checks in this message. */
  boolean off(Descriptor d) {
    MessageOptions o = d.getOptions();
    if (o.hasExtension(Validate.disabled) || o.hasExtension(Validate.ignored)) {
      return o.getExtension(Validate.disabled) || o.getExtension(Validate.ignored);
    }
    if (o.getUnknownFields().hasField(Validate.DISABLED_FIELD_NUMBER)
        || o.getUnknownFields().hasField(Validate.IGNORED_FIELD_NUMBER)) {
      try {
        MessageOptions again = MessageOptions.parseFrom(o.toByteString(), registry);
        return again.getExtension(Validate.disabled) || again.getExtension(Validate.ignored);
      } catch (InvalidProtocolBufferException e) {
        throw new IllegalArgumentException(
            "unreadable validation options on " + d.getFullName() + ": " + e.getMessage(), e);
      }
    }
    return false;
  }

  /** {@code validate.required} on a oneof: one of its fields must be set. */
  boolean required(OneofDescriptor oneof) {
    OneofOptions o = oneof.getOptions();
    if (o.hasExtension(Validate.required)) {
      return o.getExtension(Validate.required);
    }
    if (o.getUnknownFields().hasField(Validate.REQUIRED_FIELD_NUMBER)) {
      try {
        return OneofOptions.parseFrom(o.toByteString(), registry).getExtension(Validate.required);
      } catch (InvalidProtocolBufferException e) {
        throw new IllegalArgumentException(
            "unreadable validation options on " + oneof.getFullName() + ": " + e.getMessage(), e);
      }
    }
    return false;
  }
}
