package dev.meridian.internal.server;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import java.util.concurrent.atomic.AtomicBoolean;

/** Calls that hold a place in a count (a cap, a quota) until they end. */
final class CountedCalls {
  private CountedCalls() {}

  /**
   * Starts {@code call}, which holds a place already taken; {@code giveBack} runs once when it
   * ends (completed or cancelled), or at once if it fails to start.
   */
  static <Q, R> ServerCall.Listener<Q> start(ServerCall<Q, R> call, Metadata headers,
      ServerCallHandler<Q, R> next, Runnable giveBack) {
    ServerCall.Listener<Q> listener;
    try {
      listener = next.startCall(call, headers);
    } catch (RuntimeException e) {
      giveBack.run();
      throw e;
    }
    AtomicBoolean ended = new AtomicBoolean();
    // Exactly one of onComplete and onCancel ends every started call; given back once anyway.
    return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
      @Override
      public void onComplete() {
        end();
        super.onComplete();
      }

      @Override
      public void onCancel() {
        end();
        super.onCancel();
      }

      private void end() {
        if (ended.compareAndSet(false, true)) {
          giveBack.run();
        }
      }
    };
  }
}
