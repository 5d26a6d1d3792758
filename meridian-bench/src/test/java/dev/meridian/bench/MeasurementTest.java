package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The load generator's arithmetic and parsing: percentiles, /proc, GC logs. */
class MeasurementTest {
  @Test
  void percentilesUseNearestRank() {
    double[] samples = new double[100];
    for (int i = 0; i < 100; i++) {
      samples[i] = 100 - i; // 100..1, unsorted on purpose
    }
    Stats s = new Stats(samples);
    assertThat(s.min()).isEqualTo(1);
    assertThat(s.percentile(50)).isEqualTo(50);
    assertThat(s.percentile(90)).isEqualTo(90);
    assertThat(s.percentile(99)).isEqualTo(99);
    assertThat(s.max()).isEqualTo(100);
    assertThat(s.mean()).isCloseTo(50.5, within(1e-9));
    assertThat(samples[0]).isEqualTo(100); // the caller's array is not sorted in place

    Stats three = new Stats(new double[] {30, 10, 20});
    assertThat(three.percentile(50)).isEqualTo(20);
    assertThat(three.percentile(99)).isEqualTo(30);
    assertThat(new Stats(new double[] {7}).percentile(99)).isEqualTo(7);
    assertThat(new Stats(new double[0]).percentile(50)).isNaN();
  }

  @Test
  void parsesProcStatEvenWithSpacesAndParenthesesInTheCommand() {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
    String stat = "4242 (java (x) y) S 1 4242 4242 0 -1 4194560 52311 0 12 0 1234 566 0 0 20 0 "
        + "42 0 9876 8000000000 123456 18446744073709551615 1 1 0 0 0 0 0 4096 16384 0 0 0 17 1 0 0 0 0 0";
    assertThat(ProcStats.cpuSeconds(stat)).isCloseTo(18.0, within(1e-9)); // (1234 + 566) / 100
  }

  @Test
  void parsesProcStatusSizes() {
    List<String> status = List.of("Name:\tjava", "VmHWM:\t  2097152 kB", "VmRSS:\t  1048576 kB",
        "Threads:\t42");
    assertThat(ProcStats.statusBytes(status, "VmHWM")).isEqualTo(2L << 30);
    assertThat(ProcStats.statusBytes(status, "VmRSS")).isEqualTo(1L << 30);
    assertThat(ProcStats.statusBytes(status, "Threads")).isEqualTo(42);
    assertThat(ProcStats.statusBytes(status, "VmSwap")).isEqualTo(-1);
  }

  @Test
  void readsThisProcess() throws Exception {
    long pid = ProcessHandle.current().pid();
    assertThat(ProcStats.cpuSeconds(pid)).isGreaterThan(0);
    assertThat(ProcStats.rss(pid)).isGreaterThan(1 << 20);
    assertThat(ProcStats.peakRss(pid)).isGreaterThan(1 << 20);
    // Peak and current from one read: the kernel reports VmHWM as at least VmRSS then. Across two
    // reads it need not be: pages the JVM hands back between them (madvise) lower VmRSS without
    // raising the recorded peak, and the counters are per-CPU approximations.
    List<String> status = Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"));
    assertThat(ProcStats.statusBytes(status, "VmHWM"))
        .isGreaterThanOrEqualTo(ProcStats.statusBytes(status, "VmRSS"));
  }

  @Test
  void summarizesGcPauses() {
    List<String> log = List.of(
        "[0.012s][info][gc] Using G1",
        "[1.234s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 24M->4M(256M) 3.500ms",
        "[2.345s][info][gc] GC(1) Pause Young (Concurrent Start) (G1 Humongous Allocation) 100M->90M(256M) 12.25ms",
        "[2.400s][info][gc] GC(2) Concurrent Mark Cycle 40.000ms",
        "[3.000s][info][gc] GC(3) Pause Remark 95M->95M(256M) 1.250ms",
        "[9.000s][info][gc] GC(4) Pause Full (G1 Compaction Pause) 900M->300M(1024M) 250.000ms");
    GcLog.Pauses p = GcLog.summarize(log);
    assertThat(p.count()).isEqualTo(4);
    assertThat(p.totalMs()).isCloseTo(267.0, within(1e-9));
    assertThat(p.maxMs()).isCloseTo(250.0, within(1e-9));
    assertThat(GcLog.heapAfterLastFullGcMiB(log)).isEqualTo(300);
  }

  @Test
  void readsResourceNamesWithoutParsingTheResource() throws Exception {
    Fleet fleet = new Fleet(20, 2);
    byte[] c = fleet.cluster(17).toByteArray();
    assertThat(LightResponse.nameIndex(c, 0, c.length)).isEqualTo(17);
    byte[] e = fleet.endpoints(3).toByteArray();
    assertThat(LightResponse.nameIndex(e, 0, e.length)).isEqualTo(3);
    byte[] other = io.envoyproxy.envoy.config.cluster.v3.Cluster.newBuilder().setName("other-3").build().toByteArray();
    assertThat(LightResponse.nameIndex(other, 0, other.length)).isEqualTo(-1);
  }

  @Test
  void lightResponsesReadWhatTheProtobufParserReads() throws Exception {
    Fleet fleet = new Fleet(30, 2);
    var sotw = io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse.newBuilder()
        .setVersionInfo("v1").setTypeUrl(BenchClient.EDS).setNonce("7").setCanary(true) // varint
        .setControlPlane(io.envoyproxy.envoy.config.core.v3.ControlPlane.newBuilder()
            .setIdentifier("cp")); // an unread message field
    var delta = io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse.newBuilder()
        .setSystemVersionInfo("s1").setTypeUrl(BenchClient.CDS).setNonce("8").addRemovedResources("gone");
    for (int i = 0; i < 30; i++) {
      sotw.addResources(com.google.protobuf.Any.pack(fleet.endpoints(i)));
      delta.addResources(io.envoyproxy.envoy.service.discovery.v3.Resource.newBuilder()
          .setName(Fleet.name(i)).setVersion("x" + i)
          .setResource(com.google.protobuf.Any.pack(fleet.cluster(i))));
    }
    byte[] sotwBytes = sotw.build().toByteArray();
    LightResponse s = LightResponse.read(sotwBytes, false);
    assertThat(s.typeUrl).isEqualTo(BenchClient.EDS);
    assertThat(s.version).isEqualTo("v1");
    assertThat(s.nonce).isEqualTo("7");
    assertThat(s.size).isEqualTo(sotwBytes.length);
    assertThat(s.count).isEqualTo(30);
    LightResponse d = LightResponse.read(delta.build().toByteArray(), true);
    assertThat(d.version).isEqualTo("s1");
    assertThat(d.count).isEqualTo(30);
    for (int i = 0; i < 30; i++) {
      assertThat(s.index(i)).isEqualTo(i);
      assertThat(io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment.parseFrom(s.body(i)))
          .isEqualTo(fleet.endpoints(i));
      assertThat(d.index(i)).isEqualTo(i);
      assertThat(io.envoyproxy.envoy.config.cluster.v3.Cluster.parseFrom(d.body(i))).isEqualTo(fleet.cluster(i));
    }
  }

  @Test
  void aResponseReadFromGrpcIsAViewUntilItsThreadReadsTheNext() throws Exception {
    Fleet fleet = new Fleet(3, 2);
    var first = io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse.newBuilder()
        .setVersionInfo("v1").setTypeUrl(BenchClient.EDS).setNonce("1")
        .addResources(com.google.protobuf.Any.pack(fleet.endpoints(1))).build().toByteArray();
    var second = io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse.newBuilder()
        .setVersionInfo("v2").setTypeUrl(BenchClient.EDS).setNonce("2")
        .addResources(com.google.protobuf.Any.pack(fleet.endpoints(2))).build().toByteArray();

    LightResponse a = LightResponse.SOTW.parse(new BenchClient.KnownLengthBytes(first));
    assertThat(a.size).isEqualTo(first.length);
    assertThat(io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment.parseFrom(a.body(0)))
        .isEqualTo(fleet.endpoints(1));
    LightResponse b = LightResponse.SOTW.parse(new BenchClient.KnownLengthBytes(second));

    assertThat(b.version).isEqualTo("v2");
    assertThat(b.index(0)).isEqualTo(2);
    assertThat(a.version).isEqualTo("v1"); // what was read out stays
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> a.body(0))
        .isInstanceOf(IllegalStateException.class); // its bytes are the next response's now
  }

  @Test
  void aTruncatedResponseIsAnError() {
    byte[] whole = io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse.newBuilder()
        .setVersionInfo("v1").setTypeUrl(BenchClient.EDS).setNonce("1").build().toByteArray();
    byte[] cut = java.util.Arrays.copyOf(whole, whole.length - 1); // the nonce lacks its byte

    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> LightResponse.SOTW.parse(new BenchClient.KnownLengthBytes(cut)))
        .isInstanceOf(io.grpc.StatusRuntimeException.class);
  }
}
