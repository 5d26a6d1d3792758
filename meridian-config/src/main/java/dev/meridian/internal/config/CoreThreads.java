package dev.meridian.internal.config;

import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The threads Meridian runs its own work on (streams, HTTP, the config watcher, the ticker, etcd),
 * made so that the JVM failing in any of them ({@link VirtualMachineError}: out of memory, stack
 * overflow, an internal error) ends the process. After an {@code OutOfMemoryError} a server whose
 * HTTP, watcher or ticker thread died keeps its port open and answers nothing; ended, it is
 * restarted by its supervisor (systemd, Kubernetes, Docker) and serves again from its config.
 * Anything else that escapes (an embedding application's assertion or missing class in a
 * callback that runs on these threads) goes to the process's default handler: the process may be
 * the application's. {@code meridian serve}, whose process is the server, sets {@link
 * #PROCESS_HANDLER} there, so any Error in any thread is fatal.
 */
public final class CoreThreads {
  /** The exit status of a process ended by an Error (EX_SOFTWARE, sysexits.h). */
  public static final int FATAL_EXIT = 70;

  private CoreThreads() {}

  /**
   * Ends the process for {@code error}, raised in {@code thread}: one line on standard error, then
   * {@link Runtime#halt}, since shutdown hooks may need the memory or the thread that is gone.
   */
  public static void fatal(Thread thread, Throwable error) {
    try {
      System.err.println("meridian: fatal: " + error + " in thread " + thread.getName()
          + "; exiting (" + FATAL_EXIT + ") so that the supervisor restarts the server");
      System.err.flush();
    } finally {
      Runtime.getRuntime().halt(FATAL_EXIT);
    }
  }

  /**
   * Handles what escapes one of Meridian's threads: the JVM failing is fatal; the rest goes to
   * the process's default handler, or is said on standard error without one.
   */
  public static final Thread.UncaughtExceptionHandler HANDLER = CoreThreads::uncaught;

  private static void uncaught(Thread t, Throwable e) {
    Thread.UncaughtExceptionHandler process = Thread.getDefaultUncaughtExceptionHandler();
    if (e instanceof VirtualMachineError) {
      fatal(t, e);
    } else if (process != null) {
      process.uncaughtException(t, e);
    } else {
      System.err.println("meridian: uncaught in thread " + t.getName() + ": " + e);
    }
  }

  /** For a process that is the server: any Error in any thread is fatal. */
  public static final Thread.UncaughtExceptionHandler PROCESS_HANDLER = (t, e) -> {
    if (e instanceof Error) {
      fatal(t, e);
    } else {
      System.err.println("meridian: uncaught in thread " + t.getName() + ": " + e);
    }
  };

  /** A daemon thread named {@code name} whose Error ends the process. */
  public static Thread thread(Runnable task, String name) {
    Thread t = new Thread(task, name);
    t.setDaemon(true);
    t.setUncaughtExceptionHandler(HANDLER);
    return t;
  }

  /** A factory of such threads, all named {@code name}. */
  public static ThreadFactory factory(String name) {
    return r -> thread(r, name);
  }

  /** A fixed pool of {@code threads} such threads. */
  public static ExecutorService pool(String name, int threads) {
    return new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS,
        new LinkedBlockingQueue<>(), factory(name));
  }

  /**
   * A single-threaded scheduler whose tasks' Errors end the process. A scheduled task's Error is
   * caught by its future, not by the thread: a periodic task would stop silently (the ticker, the
   * etcd retries) while the process went on.
   */
  public static ScheduledExecutorService scheduler(String name) {
    return new ScheduledThreadPoolExecutor(1, factory(name)) {
      @Override
      protected void afterExecute(Runnable r, Throwable t) {
        super.afterExecute(r, t);
        Throwable error = t;
        if (error == null && r instanceof Future<?> f && f.isDone() && !f.isCancelled()) {
          try {
            f.get();
          } catch (ExecutionException e) {
            error = e.getCause();
          } catch (CancellationException | InterruptedException e) {
            // not a failure of the task
          }
        }
        if (error instanceof Error) {
          uncaught(Thread.currentThread(), error);
        }
      }
    };
  }
}
