package example.registry;

import dev.meridian.server.DiscoveryCallbacks;
import dev.meridian.server.StreamView;

/**
 * Logs what an operator of the registry wants to know about clients: who connects and leaves,
 * and every NACK with the client's own message (a config the registry built that a client could
 * not use). Meridian runs callbacks on a thread of their own, so logging here never slows a push.
 */
final class StreamLog implements DiscoveryCallbacks {
  private static final System.Logger LOG = System.getLogger("example.registry.streams");

  @Override
  public void onStreamOpened(StreamView stream) {
    LOG.log(System.Logger.Level.INFO, "stream {0} opened: node {1} from {2}, group {3}",
        stream.id(), stream.node().getId(), stream.peer(), stream.group());
  }

  @Override
  public void onNack(StreamView stream, String typeUrl, String rejectedVersion,
      com.google.rpc.Status error) {
    LOG.log(System.Logger.Level.WARNING, "node {0} rejected {1} version {2}: {3}",
        stream.node().getId(), typeUrl.substring(typeUrl.lastIndexOf('.') + 1), rejectedVersion,
        error.getMessage());
  }

  @Override
  public void onStreamClosed(StreamView stream, String reason) {
    LOG.log(System.Logger.Level.INFO, "stream {0} of node {1} closed: {2}",
        stream.id(), stream.node().getId(), reason);
  }
}
