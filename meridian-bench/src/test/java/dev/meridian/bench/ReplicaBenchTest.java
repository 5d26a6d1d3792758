package dev.meridian.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The replica bench's whole code path with tiny numbers: a real etcd, three {@code meridian serve}
 * processes from the packaged meridian.jar, {@code meridian apply} run as a process, 3 × 5 SotW
 * clients of 10 clusters; one rehearsal on throwaway replicas, then connect, one endpoint changed
 * by apply, kill -9 of a replica (its clients resume on the others and are sent nothing), apply of
 * 50 clusters served by every survivor.
 */
class ReplicaBenchTest {
  @TempDir Path dir;

  @Test
  @Timeout(value = 90, unit = TimeUnit.SECONDS)
  void threeReplicasFiveClientsEachTenClusters() throws Exception {
    Path jar = Path.of("..", "meridian-cli", "target", "meridian.jar");
    assumeTrue(Files.exists(jar), "meridian.jar is packaged by a reactor build (mvn verify)");
    List<ReplicaBench.Row> rows = new ReplicaBench(new String[] {
        "--replicas", "3", "--clients", "5", "--clusters", "10", "--big-clusters", "50",
        "--server-jvm", "-Xmx256m -XX:TieredStopAtLevel=1", "--event-loop-threads", "1",
        "--timeout", "30", "--generator-warmup-runs", "1", "--meridian-jar", jar.toString(),
        "--work-dir", dir.toString()}).run();

    assertThat(rows).extracting(ReplicaBench.Row::event).containsExactly("connect", "one-endpoint",
        "failover (kill -9 of 1 replica)", "apply of 50 clusters (--prune): replicas serving it");
    assertThat(rows).allSatisfy(r -> assertThat(r.reached()).isEqualTo(r.clients()));
    assertThat(rows.get(0).clients()).isEqualTo(15);
    assertThat(rows.get(1).note()).contains("resources beyond the one: 0")
        .doesNotContain("unexpected");
    ReplicaBench.Row failover = rows.get(2);
    assertThat(failover.clients()).isEqualTo(5);
    assertThat(failover.resent()).isZero();
    assertThat(failover.note()).contains("survivors sent 0 responses")
        .contains("/clients in_sync 5/5").contains("every resume request received");
    assertThat(rows.get(3).clients()).isEqualTo(2);
  }
}
