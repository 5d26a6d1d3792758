package dev.meridian.internal.pgv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorSet;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.ExtensionRegistry;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.pgv.validate.Validate;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * protoc-gen-validate's own conformance cases (its harness's protos and cases.go, as data under
 * {@code src/test/resources/pgv-harness}, see {@code src/test/pgv-harness/README.md}) run through
 * {@link PgvRules}. Each case is judged as PGV's executor judges a harness, in both of its modes:
 * the verdict (no violation exactly when PGV expects no failure) and the number of violations
 * (equal to PGV's expected failures).
 */
class PgvHarnessConformanceTest {
  /**
   * Cases whose expectation cannot hold for a Java runtime, with the reason; none so far. PGV's
   * own Java harness lets two kinds of case fail, and both are kept here because what they
   * expect is "valid", which a descriptor-driven engine can meet: {@code map.no_sparse} (the
   * only sparse case, the invalid one, is commented out in cases.go) and messages marked {@code
   * validate.ignored} (PGV's Java code has no validator to call for them; ours reads the option).
   */
  private static final Map<String, String> NOT_APPLICABLE = Map.of();

  private final Harness harness = Harness.load();
  /** Each case's outcome, for the summary that closes the factory's tests. */
  private final Map<Outcome, List<Case>> outcomes = new EnumMap<>(Outcome.class);

  private enum Outcome { PASSED, WRONG_VERDICT, WRONG_COUNT, THREW, NOT_APPLICABLE }

  @Test
  void theDataIsWholeAndEveryNotApplicableCaseExists() throws Exception {
    assertThat(harness.cases).hasSizeGreaterThan(1000);
    for (Case c : harness.cases) {
      // Every byte of the case is a known field: the descriptors are the ones it was made with.
      assertThat(c.message().getUnknownFields().asMap()).as(c.displayName()).isEmpty();
    }
    assertThat(harness.cases.stream().map(c -> c.name).collect(Collectors.toSet()))
        .containsAll(NOT_APPLICABLE.keySet());
    // The engine finds the rules where Envoy's compiled descriptors keep them.
    Descriptor floatConst = harness.anyType("type.googleapis.com/tests.harness.cases.FloatConst");
    assertThat(floatConst.findFieldByName("val").getOptions().getExtension(Validate.rules)
        .getFloat().getConst()).isEqualTo(1.23f);
  }

  @TestFactory
  Stream<DynamicTest> everyCaseOfPgvsHarness() {
    // One engine for every case, as in production; a constructor that throws fails each case.
    PgvRules rules;
    RuntimeException unbuilt;
    try {
      rules = new PgvRules(harness::anyType, Clock.fixed(harness.generatedAt, ZoneOffset.UTC));
      unbuilt = null;
    } catch (RuntimeException e) {
      rules = null;
      unbuilt = e;
    }
    PgvRules engine = rules;
    RuntimeException engineFailure = unbuilt;
    Stream<DynamicTest> cases = harness.cases.stream().map(c -> dynamicTest(c.displayName(), () -> {
      if (NOT_APPLICABLE.containsKey(c.name)) {
        record(Outcome.NOT_APPLICABLE, c);
        return;
      }
      DynamicMessage message = c.message();
      List<Violation> got;
      try {
        if (engineFailure != null) {
          throw engineFailure;
        }
        got = engine.check(message);
      } catch (RuntimeException e) {
        record(Outcome.THREW, c);
        throw new AssertionError(c.displayName() + ": the engine threw", e);
      }
      String listed = got.stream().map(v -> "\n  " + v).collect(Collectors.joining());
      if ((c.failures == 0) != got.isEmpty()) {
        record(Outcome.WRONG_VERDICT, c);
        fail(c.displayName() + ": expected "
            + (c.failures == 0 ? "valid" : "invalid (" + c.failures + " failures)") + ", got "
            + got.size() + " violations" + listed);
      }
      if (got.size() != c.failures) {
        record(Outcome.WRONG_COUNT, c);
        fail(c.displayName() + ": expected " + c.failures + " failures, got " + got.size()
            + listed);
      }
      record(Outcome.PASSED, c);
    }));
    // Dynamic tests run in order: this one sees every outcome, and puts the figures in the report.
    return Stream.concat(cases, Stream.of(dynamicTest("summary", () -> {
      String summary = summary();
      System.out.print(summary);
      if (failed() > 0) {
        fail(summary);
      }
    })));
  }

  private synchronized void record(Outcome outcome, Case c) {
    outcomes.computeIfAbsent(outcome, o -> new ArrayList<>()).add(c);
  }

  /** The figures, and the failing cases by rule kind (the first two parts of a case's name). */
  private synchronized String summary() {
    StringBuilder b = new StringBuilder();
    b.append("PGV harness (").append(harness.commit).append("): ")
        .append(count(Outcome.PASSED)).append(" passed, ").append(failed()).append(" failed (")
        .append(count(Outcome.WRONG_VERDICT)).append(" wrong verdict, ")
        .append(count(Outcome.WRONG_COUNT)).append(" right verdict but wrong count, ")
        .append(count(Outcome.THREW)).append(" threw), ")
        .append(count(Outcome.NOT_APPLICABLE)).append(" not applicable, of ")
        .append(harness.cases.size()).append('\n');
    Map<String, List<String>> byKind = new TreeMap<>();
    for (Outcome o : List.of(Outcome.WRONG_VERDICT, Outcome.WRONG_COUNT, Outcome.THREW)) {
      for (Case c : outcomes.getOrDefault(o, List.of())) {
        byKind.computeIfAbsent(c.kind(), k -> new ArrayList<>())
            .add(c.displayName() + " [" + o.name().toLowerCase() + "]");
      }
    }
    byKind.forEach((kind, cases) -> {
      b.append("  ").append(kind).append(": ").append(cases.size()).append('\n');
      cases.forEach(c -> b.append("    ").append(c).append('\n'));
    });
    return b.toString();
  }

  private synchronized int failed() {
    return count(Outcome.WRONG_VERDICT) + count(Outcome.WRONG_COUNT) + count(Outcome.THREW);
  }

  private synchronized int count(Outcome o) {
    return outcomes.getOrDefault(o, List.of()).size();
  }

  /** One line of cases.tsv, its type resolved. */
  private record Case(int index, String name, Descriptor type, byte[] bytes, int failures) {
    String displayName() {
      return "#" + index + " " + name;
    }

    String kind() {
      String[] parts = name.split(" - ");
      return parts.length > 1 ? parts[0] + " - " + parts[1] : parts[0];
    }

    DynamicMessage message() throws InvalidProtocolBufferException {
      return DynamicMessage.parseFrom(type, bytes);
    }
  }

  /** The committed data, its descriptors built at run time. */
  private static final class Harness {
    final String commit;
    final Instant generatedAt;
    final List<Case> cases;
    private final Map<String, Descriptor> types;

    private Harness(String commit, Instant generatedAt, List<Case> cases,
        Map<String, Descriptor> types) {
      this.commit = commit;
      this.generatedAt = generatedAt;
      this.cases = cases;
      this.types = types;
    }

    /** The type an {@code Any}'s URL names (the part after its last slash), if a case proto has it. */
    Descriptor anyType(String typeUrl) {
      return types.get(typeUrl.substring(typeUrl.lastIndexOf('/') + 1));
    }

    static Harness load() {
      try {
        // With validate.proto's extensions registered, the rules sit in the options as
        // validate.FieldRules, as they do in the descriptors compiled into Envoy's classes.
        ExtensionRegistry registry = ExtensionRegistry.newInstance();
        Validate.registerAllExtensions(registry);
        FileDescriptorSet set =
            FileDescriptorSet.parseFrom(read("cases.desc").readAllBytes(), registry);
        Map<String, Descriptor> types = new HashMap<>();
        for (FileDescriptor f : build(set).values()) {
          f.getMessageTypes().forEach(t -> index(t, types));
        }
        Function<String, Descriptor> type = types::get;

        List<Case> cases = new ArrayList<>();
        String commit;
        Instant generatedAt;
        try (BufferedReader r = new BufferedReader(
            new InputStreamReader(read("cases.tsv"), StandardCharsets.UTF_8))) {
          String[] header = r.readLine().split("\t");
          if (header.length != 4 || !header[0].equals("#pgv-commit")
              || !header[2].equals("generated-unix-seconds")) {
            throw new IllegalStateException("cases.tsv: unexpected header " + String.join(" ", header));
          }
          commit = header[1];
          generatedAt = Instant.ofEpochSecond(Long.parseLong(header[3]));
          for (String line = r.readLine(); line != null; line = r.readLine()) {
            if (line.startsWith("#")) {
              continue;
            }
            String[] f = line.split("\t", -1);
            if (f.length != 5) {
              throw new IllegalStateException("cases.tsv: not 5 columns: " + line);
            }
            cases.add(new Case(Integer.parseInt(f[0]), f[1],
                Objects.requireNonNull(type.apply(f[2]), f[2]), Base64.getDecoder().decode(f[3]),
                Integer.parseInt(f[4])));
          }
        }
        return new Harness(commit, generatedAt, List.copyOf(cases), Map.copyOf(types));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } catch (DescriptorValidationException e) {
        throw new IllegalStateException("cases.desc does not build", e);
      }
    }

    private static InputStream read(String name) {
      return Objects.requireNonNull(
          PgvHarnessConformanceTest.class.getResourceAsStream("/pgv-harness/" + name), name);
    }

    private static void index(Descriptor t, Map<String, Descriptor> types) {
      types.put(t.getFullName(), t);
      t.getNestedTypes().forEach(n -> index(n, types));
    }

    /** Every file of the set, each built after the files it imports. */
    private static Map<String, FileDescriptor> build(FileDescriptorSet set)
        throws DescriptorValidationException {
      Map<String, FileDescriptorProto> protos = new HashMap<>();
      set.getFileList().forEach(p -> protos.put(p.getName(), p));
      Map<String, FileDescriptor> built = new HashMap<>();
      for (FileDescriptorProto p : set.getFileList()) {
        build(p.getName(), protos, built);
      }
      return built;
    }

    private static FileDescriptor build(String name, Map<String, FileDescriptorProto> protos,
        Map<String, FileDescriptor> built) throws DescriptorValidationException {
      FileDescriptor done = built.get(name);
      if (done != null) {
        return done;
      }
      FileDescriptorProto p = protos.get(name);
      if (p == null) {
        throw new IllegalStateException("cases.desc lacks " + name + ", an import");
      }
      List<FileDescriptor> deps = new ArrayList<>();
      for (String d : p.getDependencyList()) {
        deps.add(build(d, protos, built));
      }
      FileDescriptor f = FileDescriptor.buildFrom(p, deps.toArray(new FileDescriptor[0]));
      built.put(name, f);
      return f;
    }
  }
}
