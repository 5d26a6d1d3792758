package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.XdsResource;
import io.envoyproxy.envoy.config.core.v3.DataSource;
import io.envoyproxy.envoy.config.core.v3.TransportSocket;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CommonTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsCertificate;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsSessionTicketKeys;
import org.junit.jupiter.api.Test;

/** Issue 20: no key material in /config_dump or CSDS, whatever resource carries it. */
class RedactionTest {
  @Test
  void inlineKeysInsideAListenersTlsContextAreRedactedAndTheRestKept() throws Exception {
    DownstreamTlsContext tls = DownstreamTlsContext.newBuilder()
        .setCommonTlsContext(CommonTlsContext.newBuilder().addTlsCertificates(TlsCertificate
            .newBuilder().setCertificateChain(DataSource.newBuilder().setInlineString("CERT"))
            .setPrivateKey(DataSource.newBuilder().setInlineString("THE PRIVATE KEY"))
            .setPassword(DataSource.newBuilder().setInlineString("THE PASSWORD"))))
        .setSessionTicketKeys(TlsSessionTicketKeys.newBuilder()
            .addKeys(DataSource.newBuilder().setInlineString("TICKET KEY")))
        .build();
    Listener l = Listener.newBuilder().setName("https").addFilterChains(FilterChain.newBuilder()
        .setTransportSocket(TransportSocket.newBuilder().setName("envoy.transport_sockets.tls")
            .setTypedConfig(Any.pack(tls)))).build();
    Any dumped = AdminJson.redacted(XdsResource.of(ResourceType.LISTENER, l));
    String json = EnvoyTypeRegistry.get().printer().print(dumped);
    assertThat(json).doesNotContain("THE PRIVATE KEY", "THE PASSWORD", "TICKET KEY")
        .contains("CERT", Redaction.REDACTED, "https");
  }

  @Test
  void resourceWithoutKeyMaterialIsTheSameAny() {
    XdsResource r = XdsResource.of(ResourceType.LISTENER, Listener.newBuilder().setName("l").build());
    assertThat(AdminJson.redacted(r)).isSameAs(r.any());
  }
}
