package dev.meridian.internal.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import dev.meridian.internal.protocol.Redaction;
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
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.meridian.testing.RawXdsClient;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.status.v3.ClientStatusDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.status.v3.ClientStatusRequest;
import io.envoyproxy.envoy.service.status.v3.ClientStatusResponse;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** No key material in /config_dump or CSDS, whatever resource carries it, wherever in it. */
class RedactionTest {
  @TempDir Path dir;

  /** What an outside probe found in /config_dump and CSDS: each must be gone from both. */
  private static final String LEAKY = """
      resources:
        - "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster
          name: redis
          connect_timeout: 1s
          typed_extension_protocol_options:
            envoy.filters.network.redis_proxy:
              "@type": type.googleapis.com/envoy.extensions.filters.network.redis_proxy.v3.RedisProtocolOptions
              auth_password: { inline_string: "REDIS-UPSTREAM-PASSWORD" }
        - "@type": type.googleapis.com/envoy.config.listener.v3.Listener
          name: edge
          address: { socket_address: { address: 0.0.0.0, port_value: 10000 } }
          filter_chains:
            - filters:
                - name: envoy.filters.network.redis_proxy
                  typed_config:
                    "@type": type.googleapis.com/envoy.extensions.filters.network.redis_proxy.v3.RedisProxy
                    stat_prefix: redis
                    settings: { op_timeout: 1s }
                    prefix_routes: { catch_all_route: { cluster: redis } }
                    downstream_auth_passwords: [ { inline_string: "REDIS-DOWNSTREAM-PASSWORD" } ]
            - filter_chain_match: { destination_port: 8080 }
              filters:
                - name: envoy.filters.network.http_connection_manager
                  typed_config:
                    "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
                    stat_prefix: http
                    route_config:
                      name: local
                      virtual_hosts:
                        - name: all
                          domains: ["*"]
                          request_headers_to_add:
                            - header: { key: authorization, value: "Bearer BEARER-TOKEN-VALUE" }
                    http_filters:
                      - name: envoy.filters.http.basic_auth
                        typed_config:
                          "@type": type.googleapis.com/envoy.extensions.filters.http.basic_auth.v3.BasicAuth
                          users: { inline_string: "admin:{SHA}BASIC-AUTH-HASH" }
                      - name: envoy.filters.http.router
                        typed_config:
                          "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
      """;
  private static final String[] SECRETS = {"REDIS-UPSTREAM-PASSWORD", "REDIS-DOWNSTREAM-PASSWORD",
      "BEARER-TOKEN-VALUE", "BASIC-AUTH-HASH", "NODE-META-TOKEN"};

  @Test
  void credentialsInMapsAnysHeadersAndDataSourcesAreInNeitherConfigDumpNorCsds()
      throws Exception {
    try (OpsFixture f = new OpsFixture(dir)) {
      f.reload(LEAKY);
      String dump = f.get("/config_dump").body();
      assertThat(dump).doesNotContain(SECRETS).contains("redis", "edge", "authorization",
          Redaction.REDACTED);

      RawXdsClient.Sotw a = RawXdsClient.sotwAds(f.channel, Node.newBuilder().setId("envoy-a")
          .setMetadata(Struct.newBuilder().putFields("auth_token",
              Value.newBuilder().setStringValue("NODE-META-TOKEN").build())).build());
      a.ack(a.subscribe(ResourceType.CLUSTER));
      a.ack(a.subscribe(ResourceType.LISTENER));
      var csds = ClientStatusDiscoveryServiceGrpc.newBlockingStub(f.channel)
          .withDeadlineAfter(10, TimeUnit.SECONDS);
      OpsFixture.await("both types ACKed in CSDS", () -> csds.fetchClientStatus(
          ClientStatusRequest.getDefaultInstance()).getConfigList().stream().anyMatch(c -> c
              .getGenericXdsConfigsList().stream().filter(g -> g.getClientStatus()
                  == io.envoyproxy.envoy.admin.v3.ClientResourceStatus.ACKED).count() == 2));
      ClientStatusResponse r = csds.fetchClientStatus(ClientStatusRequest.getDefaultInstance());
      String text = com.google.protobuf.TextFormat.printer()
          .usingTypeRegistry(EnvoyTypeRegistry.get().protoTypeRegistry()).printToString(r);
      assertThat(text).doesNotContain(SECRETS).contains("redis", "edge", "auth_token");
      a.close();
    }
  }

  @Test
  void inlineKeysAndCertificatesInsideAListenersTlsContextAreRedactedAndTheNamesKept() throws Exception {
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
        .doesNotContain("CERT").contains(Redaction.REDACTED, "https");
  }

  @Test
  void resourceWithoutKeyMaterialIsTheSameAny() {
    XdsResource r = XdsResource.of(ResourceType.LISTENER, Listener.newBuilder().setName("l").build());
    assertThat(AdminJson.redacted(r)).isSameAs(r.any());
  }
}
