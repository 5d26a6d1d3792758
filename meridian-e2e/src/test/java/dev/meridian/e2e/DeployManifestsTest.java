package dev.meridian.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.meridian.cli.Main;
import dev.meridian.internal.config.ConfigLoader;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import picocli.CommandLine;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.cfg.MapperConfig;
import tools.jackson.databind.exc.UnrecognizedPropertyException;
import tools.jackson.databind.introspect.Annotated;
import tools.jackson.databind.introspect.JacksonAnnotationIntrospector;
import tools.jackson.databind.json.JsonMapper;

/**
 * deploy/kubernetes/ (issue 24): every manifest parses into fabric8's Kubernetes model with unknown
 * fields failing, each kustomization lists exactly its directory's manifests, and the deployments
 * carry what docs/deploy.md says they do (probes on ports that exist, resources, a non-root
 * read-only container, --max-connection-age, a drain shorter than the grace period, a PDB that
 * selects the replicas, a ConfigMap that Meridian loads).
 */
class DeployManifestsTest {
  static final Path KUBERNETES = Path.of("..", "deploy", "kubernetes");

  /** The kinds the manifests use, by apiVersion/kind; another kind fails until it is added here. */
  static final Map<String, Class<? extends HasMetadata>> KINDS = Map.of(
      "v1/ConfigMap", ConfigMap.class,
      "v1/Service", Service.class,
      "v1/ServiceAccount", ServiceAccount.class,
      "apps/v1/Deployment", Deployment.class,
      "policy/v1/PodDisruptionBudget", PodDisruptionBudget.class);

  /**
   * Strict: fabric8's model classes keep unknown fields in {@code additionalProperties} through a
   * {@code @JsonAnySetter} (and Jackson 3 ignores unknown properties by default), so a misspelt
   * field would parse silently. Without the any-setter and with FAIL_ON_UNKNOWN_PROPERTIES, it
   * fails, at any depth.
   */
  static final JsonMapper STRICT = JsonMapper.builder()
      .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .annotationIntrospector(new JacksonAnnotationIntrospector() {
        @Override
        public Boolean hasAnySetter(MapperConfig<?> config, Annotated a) {
          return false;
        }
      })
      .build();

  @TempDir
  Path tmp;

  record Manifest(Path file, HasMetadata object) {}

  static Yaml yaml() {
    return new Yaml(new SafeConstructor(new LoaderOptions()));
  }

  /** Every document of a YAML text, parsed strictly into its model class. */
  static List<HasMetadata> parse(String text) {
    List<HasMetadata> objects = new ArrayList<>();
    for (Object doc : yaml().loadAll(text)) {
      if (doc == null) {
        continue;
      }
      assertThat(doc).isInstanceOf(Map.class);
      Map<?, ?> map = (Map<?, ?>) doc;
      String key = map.get("apiVersion") + "/" + map.get("kind");
      Class<? extends HasMetadata> type = KINDS.get(key);
      assertThat(type).as("a model class for %s", key).isNotNull();
      objects.add(STRICT.convertValue(map, type));
    }
    return objects;
  }

  static List<Path> directories() throws IOException {
    try (Stream<Path> s = Files.list(KUBERNETES)) {
      return s.filter(Files::isDirectory).sorted().toList();
    }
  }

  static List<Path> manifestFiles(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".yml"))
          .filter(p -> !p.getFileName().toString().equals("kustomization.yaml"))
          .sorted().toList();
    }
  }

  static List<Manifest> manifests(Path dir) throws IOException {
    List<Manifest> all = new ArrayList<>();
    for (Path file : manifestFiles(dir)) {
      for (HasMetadata o : parse(Files.readString(file))) {
        all.add(new Manifest(file, o));
      }
    }
    return all;
  }

  static <T> List<T> ofKind(List<Manifest> manifests, Class<T> type) {
    return manifests.stream().map(Manifest::object).filter(type::isInstance).map(type::cast)
        .toList();
  }

  /**
   * Every launcher's JVM exits on OutOfMemoryError: a server out of memory whose HTTP, watcher or
   * ticker threads died would hold its ports and answer nothing, and its supervisor (systemd,
   * Docker, Kubernetes) restarts only a process that exited.
   */
  @Test
  void everyLauncherExitsOnOutOfMemory() throws IOException {
    Path root = Path.of("..");
    String launcher = Files.readString(root.resolve("meridian"));
    assertThat(launcher).containsPattern("exec java -XX:\\+ExitOnOutOfMemoryError ");
    assertThat(Files.readString(root.resolve("deploy/docker/Dockerfile")))
        .contains("ENTRYPOINT [\"java\", \"-XX:+ExitOnOutOfMemoryError\", \"-jar\"");
    assertThat(Files.readString(root.resolve("deploy/systemd/meridian.service")))
        .contains("ExecStart=/usr/bin/java -XX:+ExitOnOutOfMemoryError ");
    // The manifests: deploymentsCarryProbesResourcesAndALockedDownContainer checks each command.
  }

  @Test
  void theLayoutIsSingleAndReplicated() throws IOException {
    assertThat(directories()).extracting(p -> p.getFileName().toString())
        .containsExactly("replicated", "single");
    try (Stream<Path> s = Files.list(KUBERNETES)) {
      assertThat(s.filter(Files::isRegularFile).toList()).isEmpty();
    }
  }

  @Test
  void everyManifestParsesStrictly() throws IOException {
    for (Path dir : directories()) {
      assertThat(manifestFiles(dir)).as(dir.toString()).isNotEmpty();
      for (Path file : manifestFiles(dir)) {
        List<HasMetadata> objects = parse(Files.readString(file));
        assertThat(objects).as(file.toString()).isNotEmpty();
        for (HasMetadata o : objects) {
          assertThat(o.getMetadata().getName()).as(file.toString()).isNotBlank();
          assertThat(o.getMetadata().getNamespace())
              .as("%s: no namespace (kubectl -n / kustomize sets it)", file).isNull();
        }
      }
    }
  }

  /** The check above would pass on anything if the mapper were lenient: misspellings must fail. */
  @Test
  void aMisspeltFieldFailsAtAnyDepth() throws IOException {
    String deployment = Files.readString(KUBERNETES.resolve("single/deployment.yaml"));
    assertThat(parse(deployment)).hasSize(1);
    for (String[] typo : new String[][] {
        {"  replicas: 1", "  replica: 1"},                           // DeploymentSpec
        {"  labels:", "  lables:"},                                   // ObjectMeta
        {"readinessProbe:", "readynessProbe:"},                       // Container
        {"failureThreshold: 60", "failureTreshold: 60"},              // Probe
        {"readOnlyRootFilesystem: true", "readOnlyRootFileSystem: true"}, // SecurityContext
        {"sizeLimit: 64Mi", "sizelimit: 64Mi"},                       // EmptyDirVolumeSource
    }) {
      assertThat(deployment).contains(typo[0]);
      String broken = deployment.replaceFirst(java.util.regex.Pattern.quote(typo[0]), typo[1]);
      assertThatThrownBy(() -> parse(broken)).as(typo[1])
          .isInstanceOf(UnrecognizedPropertyException.class);
    }
    String service = Files.readString(KUBERNETES.resolve("single/service.yaml"));
    assertThatThrownBy(() -> parse(service.replace("targetPort:", "targetport:")))
        .isInstanceOf(UnrecognizedPropertyException.class);
    assertThatThrownBy(() -> parse(service.replace("kind: Service", "kind: Servise")))
        .hasMessageContaining("v1/Servise");
  }

  @Test
  void eachKustomizationListsExactlyItsManifests() throws IOException {
    for (Path dir : directories()) {
      Path kustomization = dir.resolve("kustomization.yaml");
      assertThat(kustomization).exists();
      Map<?, ?> k = (Map<?, ?>) yaml().load(Files.readString(kustomization));
      assertThat(k.get("apiVersion")).isEqualTo("kustomize.config.k8s.io/v1beta1");
      assertThat(k.get("kind")).isEqualTo("Kustomization");
      @SuppressWarnings("unchecked")
      List<Object> resources = (List<Object>) k.get("resources");
      assertThat(resources).as(kustomization.toString())
          .containsExactlyInAnyOrderElementsOf(
              manifestFiles(dir).stream().<Object>map(p -> p.getFileName().toString()).toList());
    }
  }

  @Test
  void deploymentsCarryProbesResourcesAndALockedDownContainer() throws IOException {
    for (Path dir : directories()) {
      List<Manifest> all = manifests(dir);
      List<Deployment> deployments = ofKind(all, Deployment.class);
      assertThat(deployments).as(dir.toString()).hasSize(1);
      Deployment d = deployments.get(0);
      Map<String, String> podLabels = d.getSpec().getTemplate().getMetadata().getLabels();
      assertThat(podLabels).containsAllEntriesOf(d.getSpec().getSelector().getMatchLabels());
      assertThat(d.getSpec().getSelector().getMatchExpressions()).isNullOrEmpty();
      PodSpec pod = d.getSpec().getTemplate().getSpec();
      assertThat(pod.getAutomountServiceAccountToken()).isFalse();
      assertThat(ofKind(all, ServiceAccount.class)).extracting(sa -> sa.getMetadata().getName())
          .contains(pod.getServiceAccountName());
      assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
      assertThat(pod.getSecurityContext().getRunAsUser()).isPositive();
      assertThat(pod.getContainers()).hasSize(1);
      for (Container c : pod.getContainers()) {
        String where = dir.getFileName() + "/" + c.getName();
        assertThat(c.getImage()).as(where).endsWith(":0.2.0");
        var sc = c.getSecurityContext();
        assertThat(sc.getAllowPrivilegeEscalation()).as(where).isFalse();
        assertThat(sc.getReadOnlyRootFilesystem()).as(where).isTrue();
        assertThat(sc.getCapabilities().getDrop()).as(where).containsExactly("ALL");
        // A read-only root: /tmp (JVM perf data, Netty's native library) is an emptyDir.
        assertThat(c.getVolumeMounts()).extracting(VolumeMount::getMountPath).contains("/tmp");

        assertThat(c.getResources().getRequests()).as(where).containsKeys("cpu", "memory");
        assertThat(c.getResources().getLimits()).as(where).containsKey("memory");
        assertThat(c.getResources().getLimits().get("memory"))
            .isEqualTo(c.getResources().getRequests().get("memory"));

        // The arguments are what `meridian serve` accepts (parsed by its own command line).
        assertThat(c.getCommand()).as(where).containsSubsequence("-jar", "/opt/meridian/meridian.jar");
        // Out of memory, the container exits and is restarted instead of holding its ports.
        assertThat(c.getCommand()).as(where).contains("-XX:+ExitOnOutOfMemoryError");
        assertThat(c.getArgs()).as(where).startsWith("serve").contains("--max-connection-age");
        CommandLine.ParseResult serve =
            new CommandLine(new Main()).parseArgs(c.getArgs().toArray(String[]::new)).subcommand();
        assertThat(serve.commandSpec().name()).isEqualTo("serve");
        Duration maxAge = serve.matchedOptionValue("--max-connection-age", null);
        assertThat(maxAge).as(where).isGreaterThanOrEqualTo(Duration.ofMinutes(1));
        Duration drain = serve.matchedOptionValue("--shutdown-timeout", Duration.ofSeconds(10));
        assertThat(Duration.ofSeconds(pod.getTerminationGracePeriodSeconds()))
            .as(where + ": grace period longer than --shutdown-timeout").isGreaterThan(drain);
        int xdsPort = serve.matchedOptionValue("--xds-port", 18000);
        int adminPort = serve.matchedOptionValue("--http-port", 18001);
        assertThat(c.getPorts()).extracting(ContainerPort::getContainerPort)
            .containsExactlyInAnyOrder(xdsPort, adminPort);

        // Readiness is gRPC health on the xDS port; every probe's port is one the container has.
        assertThat(c.getReadinessProbe()).as(where).isNotNull();
        assertThat(c.getLivenessProbe()).as(where).isNotNull();
        assertThat(c.getStartupProbe()).as(where).isNotNull();
        assertThat(c.getReadinessProbe().getGrpc()).as(where).isNotNull();
        assertThat(c.getReadinessProbe().getGrpc().getPort()).isEqualTo(xdsPort);
        for (Probe p : List.of(c.getReadinessProbe(), c.getLivenessProbe(), c.getStartupProbe())) {
          assertThat(probePort(c, p)).as(where + ": probe port").isIn(xdsPort, adminPort);
          if (probePort(c, p) == adminPort) {
            assertThat(serve.matchedOptionValue("--admin-bind", "127.0.0.1"))
                .as(where + ": the kubelet cannot reach a loopback admin port")
                .isNotEqualTo("127.0.0.1");
          }
        }

        // Every mount has its volume.
        assertThat(pod.getVolumes()).extracting(Volume::getName)
            .containsAll(c.getVolumeMounts().stream().map(VolumeMount::getName).toList());
      }

      // The Service exposes the xDS port of these pods, and not the admin port.
      List<Service> services = ofKind(all, Service.class);
      assertThat(services).as(dir.toString()).hasSize(1);
      Service s = services.get(0);
      assertThat(podLabels).containsAllEntriesOf(s.getSpec().getSelector());
      Container c = pod.getContainers().get(0);
      assertThat(s.getSpec().getPorts()).hasSize(1);
      ServicePort sp = s.getSpec().getPorts().get(0);
      assertThat(containerPort(c, sp.getTargetPort()).getName()).isEqualTo("xds");
    }
  }

  @Test
  void replicatedHasAPdbThatSelectsItsPodsAndSpreadsThem() throws IOException {
    for (Path dir : directories()) {
      List<Manifest> all = manifests(dir);
      Deployment d = ofKind(all, Deployment.class).get(0);
      int replicas = d.getSpec().getReplicas();
      Map<String, String> podLabels = d.getSpec().getTemplate().getMetadata().getLabels();
      List<PodDisruptionBudget> pdbs = ofKind(all, PodDisruptionBudget.class);
      PodSpec pod = d.getSpec().getTemplate().getSpec();
      if (replicas == 1) {
        // A PDB on one replica would block every node drain.
        assertThat(pdbs).as(dir.toString()).isEmpty();
        continue;
      }
      assertThat(pdbs).as(dir.toString()).hasSize(1);
      PodDisruptionBudget pdb = pdbs.get(0);
      assertThat(pdb.getSpec().getSelector().getMatchExpressions()).isNullOrEmpty();
      assertThat(pdb.getSpec().getSelector().getMatchLabels()).isNotEmpty();
      assertThat(podLabels).containsAllEntriesOf(pdb.getSpec().getSelector().getMatchLabels());
      IntOrString maxUnavailable = pdb.getSpec().getMaxUnavailable();
      IntOrString minAvailable = pdb.getSpec().getMinAvailable();
      assertThat(maxUnavailable == null ? replicas - minAvailable.getIntVal()
          : maxUnavailable.getIntVal()).isBetween(1, replicas - 1);
      assertThat(pod.getTopologySpreadConstraints()).isNotEmpty();
      for (TopologySpreadConstraint t : pod.getTopologySpreadConstraints()) {
        assertThat(podLabels).containsAllEntriesOf(t.getLabelSelector().getMatchLabels());
      }
      assertThat(pod.getTopologySpreadConstraints())
          .extracting(TopologySpreadConstraint::getTopologyKey).contains("kubernetes.io/hostname");
      // Replicas read etcd.
      List<String> args = pod.getContainers().get(0).getArgs();
      assertThat(args.get(args.indexOf("--config") + 1)).matches("etcds?://.+/.+");
    }
  }

  /** The ConfigMap is mounted where --config points, and Meridian loads its files as a config. */
  @Test
  void singleServesItsConfigMapAsAConfigDirectory() throws Exception {
    List<Manifest> all = manifests(KUBERNETES.resolve("single"));
    Deployment d = ofKind(all, Deployment.class).get(0);
    assertThat(d.getSpec().getReplicas()).isEqualTo(1);
    PodSpec pod = d.getSpec().getTemplate().getSpec();
    Container c = pod.getContainers().get(0);
    String config = c.getArgs().get(c.getArgs().indexOf("--config") + 1);
    VolumeMount mount = c.getVolumeMounts().stream()
        .filter(m -> config.equals(m.getMountPath()) || config.equals(m.getMountPath() + "/"))
        .findFirst().orElseThrow();
    assertThat(mount.getReadOnly()).isTrue();
    assertThat(mount.getSubPath()).as("a subPath mount is never updated").isNull();
    Volume volume = pod.getVolumes().stream().filter(v -> v.getName().equals(mount.getName()))
        .findFirst().orElseThrow();
    ConfigMap cm = ofKind(all, ConfigMap.class).stream()
        .filter(m -> m.getMetadata().getName().equals(volume.getConfigMap().getName()))
        .findFirst().orElseThrow();
    assertThat(cm.getData()).isNotEmpty();
    for (Map.Entry<String, String> e : cm.getData().entrySet()) {
      assertThat(e.getKey()).matches("[^.].*\\.(yaml|yml|json)");
      Files.writeString(tmp.resolve(e.getKey()), e.getValue());
    }
    ConfigLoader.Loaded loaded = new ConfigLoader().load(tmp);
    assertThat(loaded.files()).hasSize(cm.getData().size());
    assertThat(loaded.resources()).isPositive();
  }

  static int probePort(Container c, Probe p) {
    if (p.getGrpc() != null) {
      return p.getGrpc().getPort();
    }
    IntOrString port = p.getTcpSocket() != null ? p.getTcpSocket().getPort()
        : Objects.requireNonNull(p.getHttpGet(), "a grpc, tcpSocket or httpGet probe").getPort();
    return containerPort(c, port).getContainerPort();
  }

  static ContainerPort containerPort(Container c, IntOrString port) {
    return c.getPorts().stream()
        .filter(p -> port.getStrVal() != null ? port.getStrVal().equals(p.getName())
            : port.getIntVal().equals(p.getContainerPort()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no container port " + port + " in " + c.getName()));
  }
}
