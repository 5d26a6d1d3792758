package dev.meridian.internal.server;

import dev.meridian.internal.protocol.Outcome;
import io.grpc.Status;

final class GrpcStatuses {
  private GrpcStatuses() {}

  static Status toStatus(Outcome.Close close) {
    Status s = switch (close.code()) {
      case INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
      case PERMISSION_DENIED -> Status.PERMISSION_DENIED;
      case UNIMPLEMENTED -> Status.UNIMPLEMENTED;
      case INTERNAL -> Status.INTERNAL;
      case RESOURCE_EXHAUSTED -> Status.RESOURCE_EXHAUSTED;
    };
    return s.withDescription(close.message());
  }
}
