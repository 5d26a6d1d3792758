package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.Status;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 19, the differential proof: random requests (names, wildcard, large shared lists), ACKs
 * and NACKs, reconnects (version_info, initial_resource_versions) and config changes, driven
 * through several SotW and Delta clients (ADS and per-type) whose streams share one interning
 * {@link Sharing}, as a hub's do. Every stream has a twin on {@link Sharing#plain()}: each step's
 * outcomes must be the same bytes (the peers check it). Along the way the protocol's invariants
 * are checked on what the clients receive.
 *
 * <p>Seeded and bounded: a failure names its seed; {@code -Dmeridian.sharing.seed=N} reruns one.
 */
class SharingDifferentialTest {
  static final ResourceType CDS = ResourceType.CLUSTER;
  static final ResourceType EDS = ResourceType.ENDPOINT;
  static final ResourceType LDS = ResourceType.LISTENER;
  static final ResourceType RDS = ResourceType.ROUTE;
  /** Enough names that subscriptions of most of them take the shared (large) paths. */
  static final int CLUSTERS = 90;
  static final int LISTENERS = 4;
  static final int STEPS = 150;

  static List<Long> seeds() {
    String one = System.getProperty("meridian.sharing.seed");
    if (one != null) {
      return List.of(Long.parseLong(one));
    }
    return List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L, 15L, 16L);
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  void plainAndInterningSharingGiveTheSameOutcomesAndKeepTheInvariants(long seed) {
    try {
      new Run(seed).run();
    } catch (AssertionError e) {
      throw new AssertionError("seed " + seed + " (rerun: -Dmeridian.sharing.seed=" + seed
          + "): " + e.getMessage(), e);
    }
  }

  static List<String> clusterNames() {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < CLUSTERS; i++) {
      names.add("c" + i);
    }
    return names;
  }

  static List<String> names(ResourceType type) {
    if (type == CDS || type == EDS) {
      return clusterNames();
    }
    List<String> names = new ArrayList<>();
    for (int i = 0; i < LISTENERS; i++) {
      names.add((type == LDS ? "l" : "r") + i);
    }
    return names;
  }

  /** One seeded run: a hub's worth of clients and a config that keeps changing. */
  static final class Run {
    final Random random;
    final Sharing hub = Sharing.interning();
    /** A large subscription several clients send alike (in the same order): shared when interned. */
    final List<String> common;
    ServedConfig config;
    final List<Client> clients = new ArrayList<>();
    /** What happened, for a failure's message. */
    final List<String> trace = new ArrayList<>();
    /** Whether to take another step (a fuzzer's run ends with its input). */
    final java.util.function.IntPredicate more;
    int nodes;

    Run(long seed) {
      this(new Random(seed), step -> step < STEPS);
      clients.add(new SotwClient(this, null, false));
      clients.add(new SotwClient(this, EDS, false));
      clients.add(new SotwClient(this, CDS, false));
      clients.add(new DeltaClient(this, null, false));
      clients.add(new DeltaClient(this, EDS, false));
      // A fleet: clients that ask alike and mostly ACK, so that their streams stay in sync and
      // take the paths where an interning Sharing shares (interned sets, remembered answers).
      for (int i = 0; i < 3; i++) {
        clients.add(new SotwClient(this, null, true));
        clients.add(new DeltaClient(this, null, true));
      }
    }

    /** A run with no clients yet: the caller adds them (the fuzz target picks its own). */
    Run(Random random, java.util.function.IntPredicate more) {
      this.random = random;
      this.more = more;
      List<String> all = clusterNames();
      Collections.shuffle(all, random);
      common = List.copyOf(all.subList(0, 75));
      config = randomConfig();
    }

    void run() {
      try {
        steps();
      } catch (AssertionError e) {
        List<String> tail = trace.subList(Math.max(0, trace.size() - 60), trace.size());
        throw new AssertionError(e.getMessage() + "\nlast events:\n  " + String.join("\n  ", tail),
            e);
      }
    }

    void steps() {
      for (int step = 0; more.test(step); step++) {
        int what = random.nextInt(20);
        if (what < 3) {
          ServedConfig next = randomConfig();
          trace.add("config " + describe(next));
          for (Client c : clients) {
            c.reappearing(next);
            c.reload(next);
          }
          config = next;
        } else if (what < 4) {
          Client c = clients.get(random.nextInt(clients.size()));
          c.reconnect();
        } else {
          clients.get(random.nextInt(clients.size())).act();
        }
      }
    }

    /** Each type's version and size, for the trace. */
    static String describe(ServedConfig c) {
      StringBuilder b = new StringBuilder();
      for (ResourceType t : List.of(CDS, EDS, LDS, RDS)) {
        TypeSnapshot s = c.defaults().get(t);
        b.append(t.abbreviation()).append(' ').append(s.size()).append('@')
            .append(prefix(s.version())).append(' ');
      }
      return b.toString();
    }

    /** Each resource present most of the time, in one of a few versions. */
    ServedConfig randomConfig() {
      List<XdsResource> resources = new ArrayList<>();
      for (String c : clusterNames()) {
        if (random.nextInt(10) > 0) {
          int v = random.nextInt(6) == 0 ? 1 + random.nextInt(2) : 0;
          resources.add(v == 0 ? Fixtures.cluster(c) : Fixtures.clusterWithTimeout(c, v));
        }
        if (random.nextInt(10) > 0) {
          resources.add(Fixtures.endpoints(c, random.nextInt(8) == 0 ? 2 + random.nextInt(2) : 1));
        }
      }
      for (int i = 0; i < LISTENERS; i++) {
        if (random.nextInt(8) > 0) {
          resources.add(SequencingTest.listener("l" + i, "r" + i));
        }
        if (random.nextInt(8) > 0) {
          resources.add(Fixtures.route("r" + i, "c" + random.nextInt(CLUSTERS)));
        }
      }
      return Fixtures.config(resources.toArray(XdsResource[]::new));
    }

    /** What a fleet client asks for: everything (wildcard) or the one common list of endpoints. */
    List<String> fleetNames(ResourceType type) {
      if (type == EDS) {
        return random.nextBoolean() ? clusterNames() : common;
      }
      return type == RDS ? names(RDS) : List.of(Subscription.WILDCARD);
    }

    /** Names a client asks for: all of them, the common large list, or a random few or many. */
    List<String> randomNames(ResourceType type) {
      List<String> all = names(type);
      int pick = random.nextInt(10);
      if (type == CDS || type == EDS) {
        if (pick < 3) {
          return all;
        } else if (pick < 6) {
          return common;
        }
      }
      List<String> some = new ArrayList<>(all);
      Collections.shuffle(some, random);
      return List.copyOf(some.subList(0, 1 + random.nextInt(all.size())));
    }
  }

  /**
   * What one client saw, for the invariants. {@code sentAt}: name → version this stream last
   * carried; {@code mayResend}: names the client (re)subscribed since, which may come again.
   */
  abstract static class Client {
    final Run run;
    final ResourceType perType; // null: ADS
    /** Asks as a fleet does (see {@link Run#fleetNames}), answers promptly, seldom NACKs. */
    final boolean fleet;
    final Map<ResourceType, String> pending = new EnumMap<>(ResourceType.class);
    final Map<ResourceType, Set<String>> nacked = new EnumMap<>(ResourceType.class);
    final Map<ResourceType, Map<String, String>> sentAt = new EnumMap<>(ResourceType.class);
    final Map<ResourceType, Set<String>> mayResend = new EnumMap<>(ResourceType.class);
    final String name;

    Client(Run run, ResourceType perType, boolean fleet, String variant) {
      this.run = run;
      this.perType = perType;
      this.fleet = fleet;
      this.name = (fleet ? "fleet-" : "") + variant + "-"
          + (perType == null ? "ads" : perType.abbreviation()) + "-" + run.nodes++;
    }

    @Override
    public String toString() {
      return name;
    }

    /** A type to act on; a fleet client first answers what is in flight. */
    ResourceType nextType(Set<ResourceType> unanswered) {
      if (fleet && !unanswered.isEmpty() && run.random.nextInt(4) > 0) {
        List<ResourceType> open = new ArrayList<>(unanswered);
        return open.get(run.random.nextInt(open.size()));
      }
      return randomType();
    }

    boolean nackNow() {
      return run.random.nextInt(fleet ? 15 : 5) == 0;
    }

    List<ResourceType> types() {
      return perType == null ? List.of(CDS, EDS, LDS, RDS) : List.of(perType);
    }

    ResourceType randomType() {
      List<ResourceType> t = types();
      return t.get(run.random.nextInt(t.size()));
    }

    abstract void reload(ServedConfig next);

    abstract void act();

    abstract void reconnect();

    void forgetStream() {
      pending.clear();
      nacked.clear();
      sentAt.clear();
      mayResend.clear();
    }

    /**
     * The config changes. A name it no longer has may come back even at the version the client
     * has: that is news (SotW cannot say a resource went; spec "Deleting Resources"). A NACKed
     * version is not resent while the config stays at it; a config that moved away and back is a
     * new change, sent again.
     */
    void reappearing(ServedConfig next) {
      for (ResourceType type : types()) {
        Set<String> rejected = nacked.getOrDefault(type, new HashSet<>());
        for (String n : names(type)) {
          XdsResource r = next.defaults().get(type).get(n);
          if (r == null) {
            resubscribed(type, List.of(n));
          }
          rejected.removeIf(x -> x.startsWith(n + "@") && (r == null || !x.equals(n + "@" + r.version())));
        }
      }
    }

    void resubscribed(ResourceType type, java.util.Collection<String> names) {
      mayResend.computeIfAbsent(type, t -> new HashSet<>()).addAll(names);
    }

    /** The request answers the response in flight (its nonce). */
    void answered(ResourceType type) {
      pending.remove(type);
    }

    /** A response arrived: what it carries (name → version; removals as null). */
    void received(ResourceType type, String nonce, Map<String, String> carried, boolean sotw) {
      assertThat(pending.get(type)).as("%s: a second un-ACKed %s response (spec: at most one per"
          + " type in flight)", this, type).isNull();
      pending.put(type, nonce);
      log("<- " + type.abbreviation() + " " + nonce + " " + brief(carried));
      if (perType != null) {
        assertThat(type).as("%s: a per-type stream answers its own type", this).isEqualTo(perType);
      }
      Set<String> exempt = mayResend.getOrDefault(type, Set.of());
      boolean fullState = sotw && type.fullStateInSotw(); // every response is the whole state
      Map<String, String> at = sentAt.computeIfAbsent(type, t -> new HashMap<>());
      carried.forEach((name, version) -> {
        if (version == null || fullState || exempt.contains(name)) {
          return;
        }
        assertThat(nacked.getOrDefault(type, Set.of())).as("%s: %s %s at a NACKed version",
            this, type, name).doesNotContain(name + "@" + version);
        if (perType != null) {
          // On ADS, warming resends what a client asks for again (spec "Resource warming").
          assertThat(at.get(name)).as("%s: %s %s resent at the version it has", this, type, name)
              .isNotEqualTo(version);
        }
      });
      carried.forEach((name, version) -> {
        if (version == null) {
          at.remove(name);
        } else {
          at.put(name, version);
        }
        exempt.remove(name);
      });
      if (perType == null) {
        // Spec "Resource warming": on ADS, a cluster (listener) sent makes the next ask for its
        // endpoints (route) be answered with them, even unchanged, even if rejected before.
        carried.forEach((name, version) -> {
          if (version != null && type == CDS) {
            resubscribed(EDS, List.of(name));
          } else if (version != null && type == LDS) {
            resubscribed(RDS, List.of("r" + name.substring(1)));
          }
        });
      }
    }

    void log(String what) {
      run.trace.add(this + " " + what);
    }

    void rejected(ResourceType type, Map<String, String> carried) {
      Set<String> n = nacked.computeIfAbsent(type, t -> new HashSet<>());
      TypeSnapshot now = run.config.defaults().get(type);
      carried.forEach((name, version) -> {
        XdsResource r = now.get(name);
        if (version != null && r != null && r.version().equals(version)) {
          n.add(name + "@" + version); // rejected, and still what the config says (see reappearing)
        }
      });
    }

    /** Every resource of a response is of its type. */
    static void ofType(ResourceType type, String typeUrl, Any resource) {
      assertThat(typeUrl).isEqualTo(type.typeUrl());
      Any body = resource;
      if (resource.is(Resource.class)) {
        try {
          body = resource.unpack(Resource.class).getResource();
        } catch (InvalidProtocolBufferException e) {
          throw new AssertionError(e);
        }
      }
      assertThat(body.getTypeUrl()).isEqualTo(type.typeUrl());
    }
  }

  /** A SotW client: each request names its whole subscription and ACKs or NACKs the last answer. */
  static final class SotwClient extends Client {
    SotwPeer peer;
    final Map<ResourceType, List<String>> asked = new EnumMap<>(ResourceType.class);
    final Map<ResourceType, String> accepted = new EnumMap<>(ResourceType.class);
    final Map<ResourceType, DiscoveryResponse> unanswered = new EnumMap<>(ResourceType.class);

    SotwClient(Run run, ResourceType perType, boolean fleet) {
      super(run, perType, fleet, "sotw");
      peer = open();
    }

    SotwPeer open() {
      SotwPeer p = new SotwPeer(perType == null, perType, run.config, MakeBeforeBreakTest.FIXED,
          run.hub);
      p.nodeId = name;
      return p;
    }

    @Override
    void reload(ServedConfig next) {
      observe(peer.reload(next));
    }

    @Override
    void act() {
      ResourceType type = nextType(unanswered.keySet());
      List<String> before = asked.get(type);
      List<String> names = before;
      int what = run.random.nextInt(10);
      if (fleet && (before == null || what < 1)) {
        List<String> f = run.fleetNames(type);
        names = f.equals(List.of(Subscription.WILDCARD)) ? List.of() : f; // legacy wildcard
      } else if (!fleet && (before == null || what < 3)) {
        names = run.random.nextInt(5) == 0 ? List.of() // wildcard (legacy, or nothing once named)
            : run.random.nextInt(6) == 0 ? with(run.randomNames(type), Subscription.WILDCARD)
            : run.randomNames(type);
      } else if (what < 4) {
        List<String> shuffled = new ArrayList<>(before);
        Collections.shuffle(shuffled, run.random); // the same names in another order
        names = shuffled;
      }
      request(type, names, nackNow());
    }

    static List<String> with(List<String> names, String more) {
      List<String> l = new ArrayList<>(names);
      l.add(l.size() / 2, more);
      return l;
    }

    void request(ResourceType type, List<String> names, boolean nack) {
      DiscoveryRequest.Builder b = Fixtures.request(type, names.toArray(String[]::new))
          .setVersionInfo(accepted.getOrDefault(type, ""));
      DiscoveryResponse last = peer.last(type);
      DiscoveryResponse open = unanswered.remove(type);
      if (last != null) {
        b.setResponseNonce(last.getNonce());
      }
      if (open != null) {
        answered(type);
        if (nack) {
          b.setErrorDetail(Status.newBuilder().setCode(3).setMessage("rejected"));
          rejected(type, carried(open));
        } else {
          accepted.put(type, open.getVersionInfo());
          b.setVersionInfo(open.getVersionInfo());
        }
      }
      List<String> before = asked.getOrDefault(type, List.of());
      Set<String> added = new HashSet<>(names);
      added.removeAll(before);
      if (names.contains(Subscription.WILDCARD) || names.isEmpty()) {
        added.addAll(names(type)); // the wildcard may cover names it did not before
      }
      resubscribed(type, added);
      asked.put(type, names);
      log("-> " + brief(b.build()));
      observe(peer.send(b));
    }

    @Override
    void reconnect() {
      log("reconnects");
      forgetStream();
      unanswered.clear();
      peer = open();
      // Spec "Versioning and Node Identifier": the first request carries the version it holds.
      for (ResourceType type : types()) {
        List<String> names = asked.get(type);
        if (names != null) {
          resubscribed(type, names(type));
          observe(peer.send(Fixtures.request(type, names.toArray(String[]::new))
              .setVersionInfo(accepted.getOrDefault(type, ""))));
        }
      }
    }

    static Map<String, String> carried(DiscoveryResponse r) {
      Map<String, String> m = new HashMap<>();
      ResourceType type = ResourceType.fromTypeUrl(r.getTypeUrl()).orElseThrow();
      for (Any a : r.getResourcesList()) {
        try {
          Any body = a.is(Resource.class) ? a.unpack(Resource.class).getResource() : a;
          m.put(type.nameOf(type.defaultInstance().getParserForType().parseFrom(body.getValue())),
              Versions.ofBytes(body.getValue()));
        } catch (InvalidProtocolBufferException e) {
          throw new AssertionError(e);
        }
      }
      return m;
    }

    void observe(List<Outcome> out) {
      for (Outcome o : out) {
        assertThat(o).isNotInstanceOf(Outcome.Close.class);
        if (o instanceof Outcome.Send s) {
          DiscoveryResponse r = (DiscoveryResponse) s.response();
          r.getResourcesList().forEach(a -> ofType(s.type(), r.getTypeUrl(), a));
          received(s.type(), r.getNonce(), carried(r), true);
          unanswered.put(s.type(), r);
        }
      }
    }
  }

  /** A Delta client: subscribes and unsubscribes names or {@code *}, ACKs or NACKs. */
  static final class DeltaClient extends Client {
    DeltaPeer peer;
    final Map<ResourceType, Set<String>> subscribed = new EnumMap<>(ResourceType.class);
    /** What the client runs: name → version, from the responses it ACKed. */
    final Map<ResourceType, Map<String, String>> holds = new EnumMap<>(ResourceType.class);
    final Map<ResourceType, DeltaDiscoveryResponse> unanswered = new EnumMap<>(ResourceType.class);

    DeltaClient(Run run, ResourceType perType, boolean fleet) {
      super(run, perType, fleet, "delta");
      peer = open();
    }

    DeltaPeer open() {
      DeltaPeer p = new DeltaPeer(perType == null, perType, run.config, MakeBeforeBreakTest.FIXED,
          run.hub);
      p.nodeId = name;
      return p;
    }

    @Override
    void reload(ServedConfig next) {
      observe(peer.reload(next));
    }

    @Override
    void act() {
      ResourceType type = nextType(unanswered.keySet());
      Set<String> now = subscribed.computeIfAbsent(type, t -> new LinkedHashSet<>());
      int what = run.random.nextInt(10);
      DeltaDiscoveryRequest.Builder b = DeltaPeer.req(type);
      if (unanswered.containsKey(type) && (what < 6 || fleet && !now.isEmpty())) {
        DeltaDiscoveryResponse open = unanswered.remove(type);
        b.setResponseNonce(open.getNonce());
        answered(type);
        if (nackNow()) {
          b.setErrorDetail(Status.newBuilder().setCode(3).setMessage("rejected"));
          rejected(type, carried(open));
        } else {
          Map<String, String> h = holds.computeIfAbsent(type, t -> new HashMap<>());
          carried(open).forEach((n, v) -> {
            if (v == null) {
              h.remove(n);
            } else {
              h.put(n, v);
            }
          });
        }
      } else if (what < 8 || now.isEmpty()) {
        List<String> more = fleet ? run.fleetNames(type)
            : run.random.nextInt(6) == 0 ? List.of(Subscription.WILDCARD)
            : run.randomNames(type);
        b.addAllResourceNamesSubscribe(more);
        now.addAll(more);
        resubscribed(type, more.contains(Subscription.WILDCARD) ? names(type) : more);
      } else {
        List<String> less = new ArrayList<>(now);
        Collections.shuffle(less, run.random);
        less = List.copyOf(less.subList(0, 1 + run.random.nextInt(less.size())));
        b.addAllResourceNamesUnsubscribe(less);
        now.removeAll(less);
        holds.getOrDefault(type, new HashMap<>()).keySet().removeAll(less); // it drops them
        resubscribed(type, names(type)); // what the wildcard still covers may be answered again
      }
      log("-> " + brief(b.build()));
      observe(peer.send(b));
    }

    @Override
    void reconnect() {
      log("reconnects");
      forgetStream();
      unanswered.clear();
      peer = open();
      // Spec "Incremental xDS": the first request lists what the client holds.
      for (ResourceType type : types()) {
        Set<String> names = subscribed.get(type);
        if (names != null) {
          resubscribed(type, names(type));
          observe(peer.send(DeltaPeer.req(type).addAllResourceNamesSubscribe(names)
              .putAllInitialResourceVersions(holds.getOrDefault(type, Map.of()))));
        }
      }
    }

    static Map<String, String> carried(DeltaDiscoveryResponse r) {
      Map<String, String> m = new HashMap<>();
      r.getRemovedResourcesList().forEach(n -> m.put(n, null));
      for (Resource res : r.getResourcesList()) {
        m.put(res.getName(), res.getVersion());
      }
      return m;
    }

    void observe(List<Outcome> out) {
      for (Outcome o : out) {
        assertThat(o).isNotInstanceOf(Outcome.Close.class);
        if (o instanceof Outcome.Send s) {
          DeltaDiscoveryResponse r = (DeltaDiscoveryResponse) s.response();
          for (Resource res : r.getResourcesList()) {
            if (res.hasResource()) {
              ofType(s.type(), r.getTypeUrl(), res.getResource());
            }
          }
          assertThat(Collections.disjoint(r.getRemovedResourcesList(), responseNames(r)))
              .as("%s: never a name both sent and removed", this).isTrue();
          received(s.type(), r.getNonce(), carried(r), false);
          unanswered.put(s.type(), r);
        }
      }
    }

    static List<String> responseNames(DeltaDiscoveryResponse r) {
      return r.getResourcesList().stream().map(Resource::getName).toList();
    }
  }

  static String prefix(String version) {
    return version.substring(0, Math.min(6, version.length()));
  }

  static String brief(Map<String, String> carried) {
    StringBuilder b = new StringBuilder();
    new java.util.TreeMap<>(carried).forEach((n, v) -> b.append(n).append('@')
        .append(v == null ? "gone" : prefix(v)).append(' '));
    return b.length() > 300 ? b.substring(0, 300) + "..." : b.toString();
  }

  static String brief(com.google.protobuf.Message m) {
    String s = m.toString().replace('\n', ' ');
    return s.length() > 300 ? s.substring(0, 300) + "..." : s;
  }
}
