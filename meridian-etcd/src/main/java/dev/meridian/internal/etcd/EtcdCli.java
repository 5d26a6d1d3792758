package dev.meridian.internal.etcd;

import io.etcd.jetcd.Client;
import java.io.IOException;

/** A jetcd client for a command (apply, export): the same settings as a replica's. */
public final class EtcdCli {
  private EtcdCli() {}

  public static Client connect(EtcdTarget target) throws IOException {
    return EtcdClients.connect(target);
  }
}
