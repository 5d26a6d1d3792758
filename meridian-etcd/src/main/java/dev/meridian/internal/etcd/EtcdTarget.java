package dev.meridian.internal.etcd;

import dev.meridian.internal.config.StoreLayout;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A config in etcd, as {@code --config} names it (docs/etcd.md, a contract):
 * {@code etcd://HOST:PORT[,HOST:PORT...]/PREFIX}, or {@code etcds://...} for TLS to etcd with
 * {@link Tls} files.
 *
 * @param endpoints {@code http://HOST:PORT} or {@code https://HOST:PORT}, in the order given
 * @param prefix the key prefix, starting with {@code /}
 * @param tls the client TLS files for {@code etcds://}; null for {@code etcd://}
 */
public record EtcdTarget(String url, List<String> endpoints, String prefix, Tls tls) {
  /**
   * {@code --etcd-ca} (the CA etcd's certificate chains to; null: the JVM's trust store),
   * {@code --etcd-cert} and {@code --etcd-key} (a client certificate, when etcd asks for one).
   */
  public record Tls(Path ca, Path cert, Path key) {}

  /** Whether {@code config} names etcd rather than a file. */
  public static boolean isEtcd(String config) {
    return config.startsWith("etcd://") || config.startsWith("etcds://");
  }

  /**
   * Parses {@code url}; throws {@link IllegalArgumentException} with a message for the user.
   * {@code tls} is used only by {@code etcds://}; giving TLS files to {@code etcd://} is an error.
   */
  public static EtcdTarget parse(String url, Tls tls) {
    boolean secure = url.startsWith("etcds://");
    if (!secure && !url.startsWith("etcd://")) {
      throw new IllegalArgumentException(url + ": expected etcd://HOST:PORT[,HOST:PORT...]/PREFIX"
          + " or etcds://...");
    }
    String rest = url.substring(secure ? "etcds://".length() : "etcd://".length());
    int slash = rest.indexOf('/');
    String hosts = slash < 0 ? rest : rest.substring(0, slash);
    String prefix = slash < 0 ? "" : rest.substring(slash);
    if (prefix.length() <= 1) {
      throw new IllegalArgumentException(url + ": a key prefix is required, e.g. " + url
          + (url.endsWith("/") ? "" : "/") + "meridian");
    }
    if (hosts.isEmpty()) {
      throw new IllegalArgumentException(url + ": no etcd endpoint (HOST:PORT) given");
    }
    List<String> endpoints = new ArrayList<>();
    for (String hp : hosts.split(",")) {
      String scheme = secure ? "https" : "http";
      try {
        URI u = new URI(scheme + "://" + hp.trim());
        if (u.getHost() == null || u.getPort() < 0 || u.getPath() != null && !u.getPath().isEmpty()) {
          throw new URISyntaxException(hp, "expected HOST:PORT");
        }
        endpoints.add(scheme + "://" + hp.trim());
      } catch (URISyntaxException e) {
        throw new IllegalArgumentException(url + ": '" + hp + "' is not HOST:PORT");
      }
    }
    if (!secure && tls != null && (tls.ca() != null || tls.cert() != null || tls.key() != null)) {
      throw new IllegalArgumentException("--etcd-ca, --etcd-cert and --etcd-key are for etcds:// "
          + "(TLS to etcd); " + url + " is plaintext");
    }
    if (secure && tls != null && (tls.cert() == null) != (tls.key() == null)) {
      throw new IllegalArgumentException("--etcd-cert and --etcd-key go together");
    }
    return new EtcdTarget(url, List.copyOf(endpoints), prefix, secure ? tls : null);
  }

  public boolean secure() {
    return url.startsWith("etcds://");
  }

  public StoreLayout layout() {
    return new StoreLayout(prefix);
  }
}
