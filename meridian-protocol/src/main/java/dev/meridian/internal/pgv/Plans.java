package dev.meridian.internal.pgv;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.MessageOrBuilder;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/** The compiled checks of one message type's fields, and the walk that runs them. */
final class Plans {
  private Plans() {}

  /** One walk of {@link PgvRules#check}: where it is and what it found. */
  static final class Walk {
    final List<Step> path = new ArrayList<>();
    final List<Violation> found = new ArrayList<>();
    final PgvRules rules;

    Walk(PgvRules rules) {
      this.rules = rules;
    }

    void report(Step last, String value, Failure f) {
      List<Step> p = new ArrayList<>(path.size() + 2);
      p.addAll(path);
      if (last != null) {
        p.add(last);
      }
      found.add(new Violation(p, value, f.rule(), f.reason()));
    }

    void report(Step a, Step b, String value, Failure f) {
      path.add(a);
      report(b, value, f);
      path.remove(path.size() - 1);
    }

    /** Walks into {@code child} under {@code steps}. */
    void descend(MessageOrBuilder child, Step a, Step b) {
      path.add(a);
      if (b != null) {
        path.add(b);
      }
      rules.walk(child, this);
      if (b != null) {
        path.remove(path.size() - 1);
      }
      path.remove(path.size() - 1);
    }
  }

  /** The checks of one field. */
  interface FieldPlan {
    void run(MessageOrBuilder m, Walk w);
  }

  /**
   * How one value is checked: its rules ({@code check}, null for none), how it is written in a
   * violation, and whether to walk into it (a message type with rules somewhere inside).
   */
  record Element(ValueCheck check, Function<Object, String> render, boolean walk) {
    boolean idle() {
      return check == null && !walk;
    }
  }

  /** A field holding one value: a scalar, or a message (wrapper, duration, any, or other). */
  record Single(FieldDescriptor fd, Step.Field step, boolean message, boolean guard,
      Failure required, Element value) implements FieldPlan {
    @Override
    public void run(MessageOrBuilder m, Walk w) {
      if (message || guard) {
        if (!m.hasField(fd)) {
          // a oneof's other members are not "missing": only the one set is checked
          if (required != null && !guard) {
            w.report(step, null, required);
          }
          return;
        }
      }
      Object v = m.getField(fd);
      if (value.check() != null) {
        Failure f = value.check().test(v);
        if (f != null) {
          w.report(step, value.render().apply(v), f);
        }
      }
      if (value.walk()) {
        w.descend((MessageOrBuilder) v, step, null);
      }
    }
  }

  /** A repeated field: its count, uniqueness, and each element. */
  record Repeated(FieldDescriptor fd, Step.Field step, boolean ignoreEmpty, ValueCheck count,
      boolean unique, Element item) implements FieldPlan {
    private static final Failure NOT_UNIQUE =
        new Failure("repeated.unique", "must not repeat an earlier item (items must be unique)");

    @Override
    public void run(MessageOrBuilder m, Walk w) {
      int n = m.getRepeatedFieldCount(fd);
      if (ignoreEmpty && n == 0) {
        return;
      }
      if (count != null) {
        Failure f = count.test(n);
        if (f != null) {
          w.report(step, Render.value(fd, m.getField(fd)), f);
        }
      }
      if (!unique && item.idle()) {
        return;
      }
      Set<Object> seen = unique ? new HashSet<>() : null;
      for (int i = 0; i < n; i++) {
        Object v = m.getRepeatedField(fd, i);
        if (seen != null && !seen.add(uniqueKey(v))) {
          w.report(step, new Step.Index(i), item.render().apply(v), NOT_UNIQUE);
          continue;
        }
        if (item.check() != null) {
          Failure f = item.check().test(v);
          if (f != null) {
            w.report(step, new Step.Index(i), item.render().apply(v), f);
          }
        }
        if (item.walk()) {
          w.descend((MessageOrBuilder) v, step, new Step.Index(i));
        }
      }
    }

    /** Equal as PGV's Go compares items: -0 is 0, NaN equals nothing, messages by identity. */
    private static Object uniqueKey(Object v) {
      if (v instanceof Float f) {
        return f.isNaN() ? new Object() : f == 0 ? Float.valueOf(0f) : f;
      }
      if (v instanceof Double d) {
        return d.isNaN() ? new Object() : d == 0 ? Double.valueOf(0d) : d;
      }
      if (v instanceof EnumValueDescriptor e) {
        return e.getNumber();
      }
      if (v instanceof MessageOrBuilder) {
        return new Object();
      }
      return v;
    }
  }

  /** A map field: its size, then each entry's key and value. */
  record MapPlan(FieldDescriptor fd, Step.Field step, boolean ignoreEmpty, ValueCheck count,
      FieldDescriptor keyFd, ValueCheck key, FieldDescriptor valueFd, Element value)
      implements FieldPlan {
    @Override
    public void run(MessageOrBuilder m, Walk w) {
      int n = m.getRepeatedFieldCount(fd);
      if (ignoreEmpty && n == 0) {
        return;
      }
      if (count != null) {
        Failure f = count.test(n);
        if (f != null) {
          w.report(step, null, f);
        }
      }
      if (key == null && value.idle()) {
        return;
      }
      for (int i = 0; i < n; i++) {
        Message entry = (Message) m.getRepeatedField(fd, i);
        Object k = entry.getField(keyFd);
        Step.Key at = new Step.Key(keyText(keyFd, k));
        Object v = entry.getField(valueFd);
        Failure f = key == null ? null : key.test(k);
        if (f != null) {
          // one violation per entry: a bad key is reported, its value's rules are not run
          w.report(step, at, Render.element(keyFd, k),
              new Failure("map.keys", "key " + f.reason()));
        } else if (value.check() != null) {
          f = value.check().test(v);
          if (f != null) {
            w.report(step, at, value.render().apply(v), f);
          }
        }
        if (value.walk()) {
          w.descend((MessageOrBuilder) v, step, at);
        }
      }
    }

    /** A map key as proto3 JSON writes it (always a string there, unquoted here). */
    private static String keyText(FieldDescriptor keyFd, Object k) {
      return k instanceof String s ? s : Render.element(keyFd, k);
    }
  }

  /** {@code validate.required} on a oneof. */
  record OneofRequired(OneofDescriptor oneof, Step.Field step, Failure failure)
      implements FieldPlan {
    @Override
    public void run(MessageOrBuilder m, Walk w) {
      if (m.getOneofFieldDescriptor(oneof) == null) {
        w.report(step, null, failure);
      }
    }
  }

  /** A message type's plan: its field plans in field order; empty when nothing is to be done. */
  record MessagePlan(Descriptor type, FieldPlan[] fields) {
    void run(MessageOrBuilder m, Walk w) {
      for (FieldPlan f : fields) {
        f.run(m, w);
      }
    }
  }
}
