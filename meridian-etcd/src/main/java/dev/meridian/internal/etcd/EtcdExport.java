package dev.meridian.internal.etcd;

import static dev.meridian.internal.etcd.EtcdClients.bytes;
import static dev.meridian.internal.etcd.EtcdClients.string;
import static dev.meridian.internal.etcd.EtcdClients.why;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import dev.meridian.internal.config.ConfigException;
import dev.meridian.internal.config.ConfigLoader;
import dev.meridian.internal.config.StoreLayout;
import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.snakeyaml.engine.v2.api.Dump;
import org.snakeyaml.engine.v2.api.DumpSettings;
import org.snakeyaml.engine.v2.common.FlowStyle;

/**
 * {@code meridian export} (docs/etcd.md): the stored config in the file format, groups in their
 * stored order, resources by type then name. Applying the output changes nothing.
 */
public final class EtcdExport {
  public enum Format { YAML, JSON }

  private final Client client;
  private final StoreLayout layout;

  public EtcdExport(Client client, EtcdTarget target) {
    this.client = client;
    this.layout = target.layout();
  }

  /** The stored config as a config file; throws if what is stored does not load. */
  public String export(Format format)
      throws EtcdApply.Failed, ConfigException, InterruptedException {
    Map<String, String> entries = new TreeMap<>();
    try {
      for (KeyValue kv : client.getKVClient().get(bytes(layout.prefix()),
              GetOption.builder().isPrefix(true).build())
          .get(EtcdClients.REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).getKvs()) {
        entries.put(string(kv.getKey()), string(kv.getValue()));
      }
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new EtcdApply.Failed("cannot read " + layout.prefix() + " from etcd: " + why(e));
    }
    // Loaded as serve would: the groups' order, and a clear error for a store serve could not
    // read. Envoy's rules are not checked: exporting is how a store that breaks one gets fixed.
    ServedConfig config = new ConfigLoader(dev.meridian.internal.config.RuleCheck.OFF)
        .loadStored(layout, entries).config();
    JsonObject root = new JsonObject();
    JsonArray top = resources(entries, ServedConfig.DEFAULT_GROUP);
    if (!top.isEmpty()) {
      root.add("resources", top);
    }
    JsonArray groups = new JsonArray();
    for (ServedConfig.Group g : config.groups()) {
      JsonObject group = new JsonObject();
      group.addProperty("name", g.name());
      JsonObject def = JsonParser.parseString(entries.get(layout.groupKey(g.name())))
          .getAsJsonObject();
      group.add("match", def.get("match"));
      group.add("resources", resources(entries, g.name()));
      groups.add(group);
    }
    if (!groups.isEmpty()) {
      root.add("groups", groups);
    }
    String access = entries.get(layout.secretAccessKey());
    if (access != null) {
      root.add("secret_access", JsonParser.parseString(access));
    }
    if (format == Format.JSON) {
      return new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create().toJson(root)
          + "\n";
    }
    DumpSettings settings = DumpSettings.builder().setDefaultFlowStyle(FlowStyle.BLOCK)
        .setIndent(2).setIndicatorIndent(0).setWidth(120)
        // The reader's schema (YAML 1.2 core): strings it would read as null, bool or number
        // (~, Null, True, 0x1F, .NaN) are quoted.
        .setSchema(new org.snakeyaml.engine.v2.schema.CoreSchema()).build();
    return new Dump(settings).dumpToString(plain(root));
  }

  private JsonArray resources(Map<String, String> entries, String group) {
    JsonArray out = new JsonArray();
    for (ResourceType t : ResourceType.all()) {
      String typePrefix = layout.resourceKey(group, t, "");
      for (Map.Entry<String, String> e : entries.entrySet()) {
        if (e.getKey().startsWith(typePrefix)) {
          out.add(JsonParser.parseString(e.getValue()));
        }
      }
    }
    return out;
  }

  /** A JSON tree as plain Java values for YAML: numbers keep their exact value. */
  static Object plain(JsonElement e) {
    if (e == null || e.isJsonNull()) {
      return null;
    }
    if (e.isJsonObject()) {
      Map<String, Object> m = new LinkedHashMap<>();
      e.getAsJsonObject().entrySet().forEach(en -> m.put(en.getKey(), plain(en.getValue())));
      return m;
    }
    if (e.isJsonArray()) {
      List<Object> l = new ArrayList<>();
      e.getAsJsonArray().forEach(x -> l.add(plain(x)));
      return l;
    }
    JsonPrimitive p = e.getAsJsonPrimitive();
    if (p.isBoolean()) {
      return p.getAsBoolean();
    }
    if (p.isNumber()) {
      String text = p.getAsNumber().toString();
      try {
        return Long.parseLong(text);
      } catch (NumberFormatException notLong) {
        BigDecimal d = new BigDecimal(text);
        return d.scale() <= 0 ? d.toBigIntegerExact() : (Object) Double.parseDouble(text);
      }
    }
    return p.getAsString();
  }
}
