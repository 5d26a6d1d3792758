package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The parsing the Reliability runner's figures rest on. */
class ReliabilityTest {
  @Test
  void metricSumAddsEveryLabelledSampleAndSaysWhenThereIsNone() {
    String metrics = """
        # HELP meridian_streams_connected xDS streams open.
        # TYPE meridian_streams_connected gauge
        meridian_streams_connected{service="ads",variant="sotw"} 7.0
        meridian_streams_connected{service="cds",variant="delta"} 3.0
        meridian_streams_connected_other 100.0
        meridian_resources_serialized_total 42.0
        """;
    assertThat(LoadGenerator.metricSum(metrics, "meridian_streams_connected")).isEqualTo(10.0);
    assertThat(LoadGenerator.serializations(metrics)).isEqualTo(42);
    assertThat(LoadGenerator.metricSum(metrics, "meridian_responses_total")).isEqualTo(-1.0);
  }

  @Test
  void histogramTotalIsTheLastLinesBytes() {
    List<String> histogram = List.of("12345:",
        " num     #instances         #bytes  class name (module)",
        "-------------------------------------------------------",
        "   1:         59422        5012832  [B (java.base@17.0.9)",
        "Total        421312       18874368");
    assertThat(Reliability.histogramTotalBytes(histogram)).isEqualTo(18874368.0);
    assertThat(Reliability.histogramTotalBytes(List.of("12345:", "no such process"))).isNaN();
  }
}
