package dev.meridian.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Time that moves only when the test says so; due tasks run on the test's thread. */
final class FakeScheduler implements Scheduler {
  private final class Task implements Cancellable {
    final long due;
    final long seq;
    final Runnable r;
    boolean done;

    Task(long due, long seq, Runnable r) {
      this.due = due;
      this.seq = seq;
      this.r = r;
    }

    @Override
    public void cancel() {
      done = true;
      tasks.remove(this);
    }

    @Override
    public boolean isPending() {
      return !done;
    }
  }

  private final List<Task> tasks = new ArrayList<>();
  private long now;
  private long seq;

  @Override
  public long nanoTime() {
    return now;
  }

  @Override
  public synchronized Cancellable schedule(Runnable task, Duration delay) {
    Task t = new Task(now + delay.toNanos(), seq++, task);
    tasks.add(t);
    return t;
  }

  /** Moves the clock forward, running every task that falls due, in order. */
  void forward(Duration d) {
    long until = now + d.toNanos();
    while (true) {
      Task next = tasks.stream().filter(t -> t.due <= until)
          .min(Comparator.comparingLong((Task t) -> t.due).thenComparingLong(t -> t.seq))
          .orElse(null);
      if (next == null) {
        break;
      }
      tasks.remove(next);
      now = Math.max(now, next.due);
      next.done = true;
      next.r.run();
    }
    now = until;
  }

  int pending() {
    return tasks.size();
  }
}
