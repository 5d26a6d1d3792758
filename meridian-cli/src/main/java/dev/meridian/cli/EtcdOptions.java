package dev.meridian.cli;

import dev.meridian.internal.etcd.EtcdTarget;
import java.nio.file.Path;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** {@code --etcd-ca}, {@code --etcd-cert}, {@code --etcd-key}: TLS to etcd for etcds:// URLs. */
final class EtcdOptions {
  @Option(names = "--etcd-ca", paramLabel = "FILE",
      description = "etcds://: PEM CA bundle etcd's certificate must chain to (default: the JVM's "
          + "trust store).")
  Path ca;

  @Option(names = "--etcd-cert", paramLabel = "FILE",
      description = "etcds://: PEM client certificate, when etcd requires one (--client-cert-auth).")
  Path cert;

  @Option(names = "--etcd-key", paramLabel = "FILE",
      description = "etcds://: PEM (PKCS#8) private key of --etcd-cert.")
  Path key;

  /** The etcd target {@code url} names, or a usage error. */
  EtcdTarget target(CommandSpec spec, String url) {
    try {
      return EtcdTarget.parse(url, new EtcdTarget.Tls(ca, cert, key));
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  /** The TLS flags are for etcd only: a usage error with a file config. */
  void rejectFor(CommandSpec spec, String config) {
    if (ca != null || cert != null || key != null) {
      throw new ParameterException(spec.commandLine(), "--etcd-ca, --etcd-cert and --etcd-key "
          + "are for an etcds:// --config; " + config + " is a file");
    }
  }
}
