package dev.meridian.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Log lines are parsed back into their pairs exactly (serve --log-format json relies on it). */
class LogLineTest {
  @Test
  void everyLineReadsBackIntoItsEventAndPairsInOrder() {
    String line = LogLine.of("nack").kv("stream", 7).kv("node", "web 1")
        .kv("message", "bad \"cluster\"\nline\t2 \\ \u0001 x=y").kv("empty", "").kv("none", null)
        .toString();
    Map<String, String> expected = new LinkedHashMap<>();
    expected.put("event", "nack");
    expected.put("stream", "7");
    expected.put("node", "web 1");
    expected.put("message", "bad \"cluster\"\nline\t2 \\ \u0001 x=y");
    expected.put("empty", "");
    expected.put("none", "-");
    assertThat(LogLine.parse(line)).containsExactlyEntriesOf(expected);
    assertThat(LogLine.parse("shutdown")).containsExactly(Map.entry("event", "shutdown"));
  }

  @Test
  void aPlainMessageIsNotALogLine() {
    assertThat(LogLine.parse("xDS stream closed: UNAVAILABLE")).isNull();
    assertThat(LogLine.parse("config rejected")).isNull();
    assertThat(LogLine.parse("event key=\"unterminated")).isNull();
    assertThat(LogLine.parse("Event key=v")).isNull();
  }
}
