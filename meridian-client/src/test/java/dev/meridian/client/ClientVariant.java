package dev.meridian.client;

/** The four ways a client talks to a server: SotW or Delta, over ADS or per type. */
enum ClientVariant {
  SOTW_ADS(XdsClient.Protocol.SOTW, XdsClient.Mode.ADS),
  SOTW_PER_TYPE(XdsClient.Protocol.SOTW, XdsClient.Mode.PER_TYPE),
  DELTA_ADS(XdsClient.Protocol.DELTA, XdsClient.Mode.ADS),
  DELTA_PER_TYPE(XdsClient.Protocol.DELTA, XdsClient.Mode.PER_TYPE);

  final XdsClient.Protocol protocol;
  final XdsClient.Mode mode;

  ClientVariant(XdsClient.Protocol protocol, XdsClient.Mode mode) {
    this.protocol = protocol;
    this.mode = mode;
  }
}
