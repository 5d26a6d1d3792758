package dev.meridian.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Message;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The differential check of issue 19: the rules must give the same outcomes whatever the
 * {@link Sharing}. The peers run a twin stream on {@link Sharing#plain()} beside the one under
 * test and compare every step's outcomes here, responses by their serialized bytes.
 */
final class SameOutcomes {
  private SameOutcomes() {}

  /** Asserts that both lists say the same; returns {@code shared}'s. */
  static List<Outcome> check(List<Outcome> shared, List<Outcome> plain) {
    assertThat(describe(shared)).as("outcomes with an interning Sharing vs the plain one")
        .isEqualTo(describe(plain));
    return shared;
  }

  /** Each outcome as text; a response as its type and exact bytes, so equal text is equal bytes. */
  static List<String> describe(List<Outcome> out) {
    List<String> lines = new ArrayList<>(out.size());
    for (Outcome o : out) {
      if (o instanceof Outcome.Send s) {
        Message m = s.response();
        lines.add("Send " + s.type() + " " + Base64.getEncoder().encodeToString(m.toByteArray())
            + "\n  " + m.toString().replace('\n', ' '));
      } else {
        lines.add(o.toString());
      }
    }
    return lines;
  }
}
