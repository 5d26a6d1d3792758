package dev.meridian.internal.protocol;

import com.google.protobuf.Message;
import java.util.List;

/**
 * A scenario's client on one stream (with its plain twin): the config it is served, which a
 * reload replaces, and the nonce of the last response it got.
 */
abstract class VariantClient {
  final TwinStream<? extends Message> twin;
  ServedConfig config;
  String lastNonce = "";

  VariantClient(TwinStream<? extends Message> twin, ServedConfig config) {
    this.twin = twin;
    this.config = config;
  }

  List<Outcome> reload(ServedConfig next) {
    ServedConfig before = config;
    config = next;
    List<Outcome> out = twin.reload(before, next);
    remember(out);
    return out;
  }

  final void remember(List<Outcome> out) {
    lastNonce = TwinStream.lastNonce(out, lastNonce);
  }
}
