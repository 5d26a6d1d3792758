package dev.meridian.internal.pgv;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.Parser;
import com.google.re2j.Pattern;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The protoc-gen-validate rules annotated in a message type's descriptor ({@code validate.rules}
 * on fields, {@code validate.required} on oneofs, {@code validate.disabled} and {@code
 * validate.ignored} on messages), read once per type and compiled into checks. Envoy checks every
 * resource it receives against them and rejects the whole response for one violation.
 * Thread-safe: one instance serves every check of a process part.
 */
public final class PgvRules {
  private static final String ANY = "google.protobuf.Any";

  private final Function<String, Descriptor> anyTypes;
  private final Compiler compiler;
  /** Each pattern compiled once, shared by every field whose rules name it. */
  private final Map<String, Pattern> patterns = new ConcurrentHashMap<>();
  private final Map<Descriptor, Compiler.Shape> shapes = new ConcurrentHashMap<>();
  /** Whether any rule can be reached from a type: types without cost nothing to walk past. */
  private final Map<Descriptor, Boolean> reachable = new ConcurrentHashMap<>();
  private final Map<Descriptor, Plans.MessagePlan> plans = new ConcurrentHashMap<>();
  private final Map<String, Descriptor> packed = new ConcurrentHashMap<>();
  private final Map<Descriptor, Parser<? extends Message>> parsers = new ConcurrentHashMap<>();

  /**
   * {@code anyTypes}: the descriptor of a message packed in an {@code Any}, by type URL, or null
   * when the type is unknown (its content is then not checked); {@code clock}: "now", for the
   * {@code lt_now}, {@code gt_now} and {@code within} rules of timestamps.
   */
  public PgvRules(Function<String, Descriptor> anyTypes, Clock clock) {
    this.anyTypes = anyTypes;
    this.compiler = new Compiler(new RuleSource(),
        p -> patterns.computeIfAbsent(p, Pattern::compile), clock);
  }

  /** Every violation in {@code message} and the messages reachable from it, in field order. */
  public List<Violation> check(MessageOrBuilder message) {
    Plans.Walk w = new Plans.Walk(this);
    walk(message, w);
    return w.found.isEmpty() ? List.of() : List.copyOf(w.found);
  }

  /** Runs the checks of {@code m}'s type on it, and walks on into its messages. */
  void walk(MessageOrBuilder m, Plans.Walk w) {
    Descriptor type = m.getDescriptorForType();
    if (type.getFullName().equals(ANY)) {
      unpack(m, w);
      return;
    }
    Plans.MessagePlan plan = plan(type);
    if (plan != null) {
      plan.run(m, w);
    }
  }

  /**
   * The message packed in an Any, checked in place: in YAML and JSON its fields sit beside
   * {@code @type}, so it adds no step to the path.
   */
  private void unpack(MessageOrBuilder any, Plans.Walk w) {
    String url = MessageChecks.typeUrl(any);
    if (url.isEmpty()) {
      return;
    }
    Descriptor type = packedType(url);
    if (type == null || !reachable(type)) {
      return;
    }
    ByteString bytes = any instanceof com.google.protobuf.Any a ? a.getValue()
        : (ByteString) any.getField(any.getDescriptorForType().getFields().get(1));
    Message content;
    try {
      content = parser(type).parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      w.report(null, Render.jsonQuote(url), new Failure("any.type_url",
          "holds bytes that are not a valid " + type.getFullName() + " (" + e.getMessage() + ")"));
      return;
    }
    walk(content, w);
  }

  private Descriptor packedType(String url) {
    Descriptor d = packed.get(url);
    if (d == null) {
      d = anyTypes.apply(url);
      if (d != null) {
        packed.putIfAbsent(url, d);
      }
    }
    return d;
  }

  /**
   * The generated class's parser when the descriptor is a generated one (found by the usual Java
   * naming of a {@code java_multiple_files} proto), else a dynamic message's.
   */
  private Parser<? extends Message> parser(Descriptor type) {
    Parser<? extends Message> p = parsers.get(type);
    if (p == null) {
      p = generatedParser(type);
      if (p == null) {
        p = DynamicMessage.getDefaultInstance(type).getParserForType();
      }
      parsers.putIfAbsent(type, p);
    }
    return p;
  }

  private static Parser<? extends Message> generatedParser(Descriptor type) {
    FileDescriptor file = type.getFile();
    if (!file.getOptions().getJavaMultipleFiles()) {
      return null;
    }
    String pkg = file.getOptions().hasJavaPackage() ? file.getOptions().getJavaPackage()
        : file.getPackage();
    StringBuilder name = new StringBuilder(type.getName());
    for (Descriptor outer = type.getContainingType(); outer != null;
        outer = outer.getContainingType()) {
      name.insert(0, outer.getName() + "$");
    }
    try {
      Class<?> c = Class.forName((pkg.isEmpty() ? "" : pkg + ".") + name, true,
          PgvRules.class.getClassLoader());
      if (!Message.class.isAssignableFrom(c)) {
        return null;
      }
      Message instance = (Message) c.getMethod("getDefaultInstance").invoke(null);
      // only the very same type: a descriptor built at run time is read dynamically
      return instance.getDescriptorForType() == type ? instance.getParserForType() : null;
    } catch (ReflectiveOperationException | LinkageError | ClassCastException e) {
      return null;
    }
  }

  /** The plan of a type; null when no rule can be reached from it. */
  Plans.MessagePlan plan(Descriptor type) {
    Plans.MessagePlan p = plans.get(type);
    if (p != null) {
      return p.fields().length == 0 ? null : p;
    }
    List<Plans.FieldPlan> fields = new ArrayList<>();
    if (reachable(type)) {
      for (Compiler.Spec s : shape(type).specs()) {
        Plans.FieldPlan f = s.plan(this::reachable);
        if (f != null) {
          fields.add(f);
        }
      }
    }
    p = new Plans.MessagePlan(type, fields.toArray(new Plans.FieldPlan[0]));
    // two threads may compile the same type at once: both plans are equal, one is kept
    Plans.MessagePlan first = plans.putIfAbsent(type, p);
    p = first != null ? first : p;
    return p.fields().length == 0 ? null : p;
  }

  private Compiler.Shape shape(Descriptor type) {
    Compiler.Shape s = shapes.get(type);
    if (s == null) {
      s = compiler.shape(type);
      shapes.putIfAbsent(type, s);
    }
    return s;
  }

  /**
   * Whether a rule can be reached from {@code type}: its own, or one of a type it holds, however
   * deep. An Any may hold anything, so it counts as reaching rules. Recursive types (Struct and
   * Value hold each other) are settled together: every type reachable from {@code type} is read,
   * then "reaches rules" spreads back from the types with rules of their own until nothing changes.
   */
  boolean reachable(Descriptor type) {
    Boolean known = reachable.get(type);
    if (known != null) {
      return known;
    }
    Map<Descriptor, Boolean> found = new LinkedHashMap<>();
    Deque<Descriptor> todo = new ArrayDeque<>();
    todo.add(type);
    while (!todo.isEmpty()) {
      Descriptor d = todo.poll();
      if (found.containsKey(d)) {
        continue;
      }
      Boolean settled = reachable.get(d);
      if (settled != null || d.getFullName().equals(ANY)) {
        found.put(d, settled != null ? settled : Boolean.TRUE);
        continue;
      }
      Compiler.Shape s = shape(d);
      found.put(d, s.ownRules());
      todo.addAll(s.children());
    }
    boolean changed = true;
    while (changed) {
      changed = false;
      for (Map.Entry<Descriptor, Boolean> e : found.entrySet()) {
        if (e.getValue()) {
          continue;
        }
        Compiler.Shape s = shapes.get(e.getKey());
        if (s == null || s.off()) {
          continue;
        }
        for (Descriptor c : s.children()) {
          if (found.getOrDefault(c, Boolean.FALSE)) {
            e.setValue(Boolean.TRUE);
            changed = true;
            break;
          }
        }
      }
    }
    found.forEach(reachable::putIfAbsent);
    return reachable.get(type);
  }
}
