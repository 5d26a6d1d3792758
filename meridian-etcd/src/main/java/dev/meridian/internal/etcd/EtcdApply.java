package dev.meridian.internal.etcd;

import static dev.meridian.internal.etcd.EtcdClients.bytes;
import static dev.meridian.internal.etcd.EtcdClients.string;
import static dev.meridian.internal.etcd.EtcdClients.why;

import dev.meridian.internal.config.ConfigChecks;
import dev.meridian.internal.config.ConfigException;
import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.config.ReferenceCheck;
import dev.meridian.internal.config.RuleCheck;
import dev.meridian.internal.config.StoreLayout;
import dev.meridian.internal.config.StoreValues;
import dev.meridian.internal.protocol.ServedConfig;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * {@code meridian apply} (docs/etcd.md): makes the stored config what the files say, in one etcd
 * transaction. It diffs the files' stored form ({@link StoreValues}) against what is stored,
 * validates the config that would result exactly as {@code serve} loads it (the store's own
 * reader, then serve's checks), and writes every change at once, each key guarded by the revision
 * it was diffed against: a concurrent write to any of those keys fails the transaction, and apply
 * diffs again. Nothing is ever half written; no concurrent update is lost. An apply that would
 * empty the stored config, or a type within a group, is refused unless it is allowed: an empty
 * file pruned over the prefix is far more often a mistake than a wish.
 */
public final class EtcdApply {
  /** How many times a diff is retried when concurrent writers win the race. */
  static final int ATTEMPTS = 5;

  public enum Kind { CREATED, UPDATED, DELETED, UNCHANGED }

  /** One stored key: what applying does to it. {@code what} names it for people. */
  public record Change(String key, String what, Kind kind) {}

  /**
   * @param written whether a transaction was committed (false for a dry run or no changes)
   * @param revision the revision the diff was made against, or the one the write created
   * @param warnings what serve would log as warnings for the resulting config
   */
  public record Result(List<Change> changes, boolean written, long revision, int attempts,
      List<String> warnings) {
    public long count(Kind k) {
      return changes.stream().filter(c -> c.kind() == k).count();
    }
  }

  /** The resulting config would not load, or serve would reject it: nothing was written. */
  public static final class Invalid extends Exception {
    private final List<String> problems;

    Invalid(List<String> problems) {
      super(String.join("\n", problems));
      this.problems = List.copyOf(problems);
    }

    public List<String> problems() {
      return problems;
    }
  }

  /**
   * The apply would empty what is stored (every resource, or every resource of a type in a
   * group that stays) and emptying was not allowed: nothing was written. {@link #removes} names
   * what it would remove.
   */
  public static final class WouldEmpty extends Exception {
    private final List<String> removes;

    WouldEmpty(List<String> removes) {
      super(String.join("; ", removes));
      this.removes = List.copyOf(removes);
    }

    public List<String> removes() {
      return removes;
    }
  }

  /** etcd failed, refused the transaction, or concurrent writers kept winning. */
  public static final class Failed extends Exception {
    Failed(String message) {
      super(message);
    }
  }

  private final Client client;
  private final StoreLayout layout;
  private final StoreValues values;
  private final RuleCheck ruleCheck;

  /** Checks Envoy's rules ({@link RuleCheck#ENVOY}), as serve does by default. */
  public EtcdApply(Client client, EtcdTarget target) {
    this(client, target, RuleCheck.ENVOY);
  }

  /** {@code ruleCheck}: how the resulting stored config is checked, as serve would load it. */
  public EtcdApply(Client client, EtcdTarget target, RuleCheck ruleCheck) {
    this.client = client;
    this.layout = target.layout();
    this.values = new StoreValues(layout);
    this.ruleCheck = ruleCheck;
  }

  /** {@link #apply(ServedConfig, boolean, boolean, ReferenceCheck, boolean)}, refusing emptyings. */
  public Result apply(ServedConfig files, boolean prune, boolean dryRun,
      ReferenceCheck referenceCheck) throws Invalid, WouldEmpty, Failed, InterruptedException {
    return apply(files, prune, dryRun, referenceCheck, false);
  }

  /**
   * @param files the config the files hold (already loaded, so their problems are reported with
   *     file and line before anything else)
   * @param prune delete stored keys the files do not have
   * @param dryRun diff and validate only
   * @param allowEmpty write even a result that empties the stored config or a type of a group
   *     ({@code --allow-empty}); false: such an apply throws {@link WouldEmpty}, dry run or not
   */
  public Result apply(ServedConfig files, boolean prune, boolean dryRun,
      ReferenceCheck referenceCheck, boolean allowEmpty)
      throws Invalid, WouldEmpty, Failed, InterruptedException {
    Map<String, String> fromFiles;
    try {
      fromFiles = values.entriesOf(files);
    } catch (IllegalArgumentException e) {
      throw new Invalid(List.of(e.getMessage())); // a resource JSON cannot express
    }
    for (int attempt = 1; ; attempt++) {
      GetResponse stored = read();
      long revision = stored.getHeader().getRevision();
      Map<String, KeyValue> current = new HashMap<>();
      for (KeyValue kv : stored.getKvs()) {
        current.put(string(kv.getKey()), kv);
      }
      Map<String, String> desired = new HashMap<>(fromFiles);
      desired.putAll(groupOrder(files, current, prune));
      List<Change> changes = new ArrayList<>();
      Map<String, String> result = new HashMap<>();
      current.forEach((k, kv) -> result.put(k, string(kv.getValue())));
      for (String key : new TreeSet<>(union(desired.keySet(), current.keySet()))) {
        String want = desired.get(key);
        KeyValue have = current.get(key);
        if (want == null) {
          if (prune) {
            changes.add(new Change(key, describe(key), Kind.DELETED));
            result.remove(key);
          }
        } else if (have == null) {
          changes.add(new Change(key, describe(key), Kind.CREATED));
          result.put(key, want);
        } else if (!string(have.getValue()).equals(want)) {
          changes.add(new Change(key, describe(key), Kind.UPDATED));
          result.put(key, want);
        } else {
          changes.add(new Change(key, describe(key), Kind.UNCHANGED));
        }
      }
      List<String> warnings = validate(result, referenceCheck);
      if (!allowEmpty) {
        // Who subscribes is unknown here: any group may have clients of any type.
        dev.meridian.internal.config.Emptying.Found found =
            dev.meridian.internal.config.Emptying.find(inventory(current.keySet()),
                inventory(result.keySet()), List.of(), List.of(),
                dev.meridian.internal.config.Emptying.Subscribers.ANYONE);
        if (found.holds()) {
          throw new WouldEmpty(found.holding());
        }
      }
      boolean any = changes.stream().anyMatch(c -> c.kind() != Kind.UNCHANGED);
      if (dryRun || !any) {
        return new Result(changes, false, revision, attempt, warnings);
      }
      TxnResponse txn = write(changes, desired, current, revision);
      if (txn.isSucceeded()) {
        return new Result(changes, true, txn.getHeader().getRevision(), attempt, warnings);
      }
      if (attempt == ATTEMPTS) {
        throw new Failed("other writers changed " + layout.prefix() + " during each of "
            + ATTEMPTS + " attempts; nothing was written. Try again.");
      }
    }
  }

  /**
   * The group definitions with the order they are tried in. Groups keep their stored numbers
   * when the order does not change, so an apply that reorders nothing rewrites no group (and
   * export then apply changes nothing). Without --prune a stored group the files do not have
   * keeps its place, the files' groups take the places their stored selves held in the files'
   * order, and new groups come last; with --prune the files' order is the order.
   */
  private Map<String, String> groupOrder(ServedConfig files, Map<String, KeyValue> current,
      boolean prune) {
    Map<String, ServedConfig.Group> inFiles = new java.util.LinkedHashMap<>();
    files.groups().forEach(g -> inFiles.put(g.name(), g));
    Map<String, Integer> storedOrder = new HashMap<>();
    Map<String, com.google.gson.JsonObject> storedValue = new HashMap<>();
    current.forEach((key, kv) -> {
      if (layout.parse(key) instanceof StoreLayout.GroupKey g) {
        try {
          com.google.gson.JsonObject o = com.google.gson.JsonParser.parseString(
              string(kv.getValue())).getAsJsonObject();
          storedValue.put(g.group(), o);
          storedOrder.put(g.group(), o.has("order") ? o.get("order").getAsInt() : 0);
        } catch (RuntimeException notJson) {
          storedOrder.put(g.group(), 0); // not a valid definition: rewritten if in the files
        }
      }
    });
    List<String> storedSeq = new ArrayList<>(storedOrder.keySet());
    storedSeq.sort(java.util.Comparator.<String>comparingInt(storedOrder::get)
        .thenComparing(java.util.Comparator.naturalOrder()));
    List<String> seq;
    if (prune) {
      seq = new ArrayList<>(inFiles.keySet());
    } else {
      seq = new ArrayList<>(storedSeq);
      java.util.Iterator<String> reordered = inFiles.keySet().stream()
          .filter(storedOrder::containsKey).iterator();
      for (int i = 0; i < seq.size(); i++) {
        if (inFiles.containsKey(seq.get(i))) {
          seq.set(i, reordered.next());
        }
      }
      inFiles.keySet().stream().filter(n -> !storedOrder.containsKey(n)).forEach(seq::add);
    }
    List<String> storedKept = storedSeq.stream().filter(seq::contains).toList();
    boolean sameOrder = seq.subList(0, storedKept.size()).equals(storedKept);
    Map<String, Integer> number = new HashMap<>();
    int next = sameOrder ? storedKept.stream().mapToInt(storedOrder::get).max().orElse(-1) + 1 : 0;
    for (String name : seq) {
      number.put(name, sameOrder && storedOrder.containsKey(name) ? storedOrder.get(name)
          : next++);
    }
    Map<String, String> out = new HashMap<>();
    for (String name : seq) {
      ServedConfig.Group g = inFiles.get(name);
      if (g != null) {
        out.put(layout.groupKey(name), StoreValues.group(g.matcher(), number.get(name)));
      } else if (!number.get(name).equals(storedOrder.get(name)) && storedValue.containsKey(name)) {
        com.google.gson.JsonObject o = storedValue.get(name).deepCopy();
        o.addProperty("order", number.get(name));
        out.put(layout.groupKey(name), o.toString()); // renumbered, its match untouched
      }
    }
    return out;
  }

  /**
   * The resources of stored keys by group and type; a group stays while its definition or a
   * resource of it is stored, and the default group always does.
   */
  private dev.meridian.internal.config.Emptying.Inventory inventory(java.util.Set<String> keys) {
    Map<String, Map<dev.meridian.xds.ResourceType, java.util.Set<String>>> byGroup = new HashMap<>();
    byGroup.put(ServedConfig.DEFAULT_GROUP, new HashMap<>());
    for (String key : keys) {
      StoreLayout.Key k = layout.parse(key);
      if (k instanceof StoreLayout.ResourceKey r) {
        byGroup.computeIfAbsent(r.group(), g -> new HashMap<>())
            .computeIfAbsent(r.type(), t -> new java.util.HashSet<>()).add(r.name());
      } else if (k instanceof StoreLayout.GroupKey g) {
        byGroup.computeIfAbsent(g.group(), n -> new HashMap<>());
      }
    }
    return dev.meridian.internal.config.Emptying.Inventory.of(byGroup);
  }

  private GetResponse read() throws Failed, InterruptedException {
    try {
      return client.getKVClient().get(bytes(layout.prefix()),
              GetOption.builder().isPrefix(true).build())
          .get(EtcdClients.REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new Failed("cannot read " + layout.prefix() + " from etcd: " + why(e));
    }
  }

  /** The stored config after the change, loaded as serve loads it, with serve's checks. */
  private List<String> validate(Map<String, String> result, ReferenceCheck referenceCheck)
      throws Invalid {
    ConfigLoader.Loaded loaded;
    try {
      // The files' resources are known by their text: only stored-only values are parsed.
      loaded = new ConfigLoader(values.printed(), ruleCheck).loadStored(layout, result);
    } catch (ConfigException e) {
      throw new Invalid(e.problems());
    }
    ConfigChecks.Result checks = ConfigChecks.run(loaded.config(), referenceCheck);
    if (checks.rejected()) {
      List<String> why = new ArrayList<>();
      checks.rejections().forEach(f -> why.add(f.toString()));
      throw new Invalid(why);
    }
    return checks.warnings().stream().map(ConfigChecks.Finding::toString).toList();
  }

  private TxnResponse write(List<Change> changes, Map<String, String> desired,
      Map<String, KeyValue> current, long revision) throws Failed, InterruptedException {
    List<Cmp> guards = new ArrayList<>();
    // Nothing under the prefix created or changed since the diff's read...
    guards.add(new io.etcd.jetcd.op.PrefixRevisionCmp(bytes(layout.prefix()), revision));
    List<Op> ops = new ArrayList<>();
    for (Change c : changes) {
      if (c.kind() == Kind.UNCHANGED) {
        continue;
      }
      KeyValue have = current.get(c.key());
      // ...and every key it changes as it was (this also sees one deleted meanwhile).
      guards.add(new Cmp(bytes(c.key()), Cmp.Op.EQUAL,
          CmpTarget.modRevision(have == null ? 0 : have.getModRevision())));
      ops.add(c.kind() == Kind.DELETED ? Op.delete(bytes(c.key()), DeleteOption.DEFAULT)
          : Op.put(bytes(c.key()), bytes(desired.get(c.key())), PutOption.DEFAULT));
    }
    try {
      return client.getKVClient().txn().If(guards.toArray(Cmp[]::new))
          .Then(ops.toArray(Op[]::new)).commit()
          .get(EtcdClients.REQUEST_TIMEOUT.toMillis() * 6, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      String why = why(e);
      if (why.contains("too many operations")) {
        throw new Failed("etcd refused one transaction of " + ops.size() + " changes (" + why
            + "): start etcd with --max-txn-ops at least " + ops.size()
            + " (docs/etcd.md); nothing was written");
      }
      if (why.contains("request is too large") || why.contains("larger than max")) {
        throw new Failed("etcd refused one transaction of " + ops.size() + " changes (" + why
            + "): raise etcd's --max-request-bytes (docs/etcd.md); nothing was written");
      }
      if (e instanceof java.util.concurrent.TimeoutException) {
        throw new Failed("no answer from etcd to the transaction within "
            + EtcdClients.REQUEST_TIMEOUT.toSeconds() * 6 + " s: it was applied whole or not at "
            + "all; run the same apply with --dry-run to see which");
      }
      throw new Failed("the transaction failed: " + why + " (etcd applies all of it or none)");
    }
  }

  /** A key for people: {@code clusters default/backend}, {@code group canary}, ... */
  String describe(String key) {
    StoreLayout.Key k = layout.parse(key);
    if (k instanceof StoreLayout.ResourceKey r) {
      return r.type().shortName() + " " + r.group() + "/" + r.name();
    }
    if (k instanceof StoreLayout.GroupKey g) {
      return "group " + g.group();
    }
    if (k instanceof StoreLayout.SecretAccessKey) {
      return "secret_access";
    }
    return "key " + key;
  }

  private static <T> java.util.Set<T> union(java.util.Set<T> a, java.util.Set<T> b) {
    java.util.Set<T> u = new java.util.HashSet<>(a);
    u.addAll(b);
    return u;
  }
}
