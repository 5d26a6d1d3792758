package dev.meridian.client;

/** A bootstrap that cannot be used; the message names the offending field (gRFC A27). */
public final class BootstrapException extends Exception {
  private final String field;

  public BootstrapException(String field, String problem) {
    super(field + ": " + problem);
    this.field = field;
  }

  public BootstrapException(String field, String problem, Throwable cause) {
    super(field + ": " + problem, cause);
    this.field = field;
  }

  /** The JSON path of the field at fault, such as {@code xds_servers[0].server_uri}. */
  public String field() {
    return field;
  }
}
