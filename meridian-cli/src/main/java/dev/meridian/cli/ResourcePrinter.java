package dev.meridian.cli;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.meridian.client.ResourceUpdate;
import dev.meridian.internal.protocol.EnvoyTypeRegistry;
import java.util.LinkedHashMap;
import java.util.Map;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/** Prints resources as proto3 JSON (with {@code @type}) or the same tree as YAML. */
final class ResourcePrinter {
  private static final Gson PRETTY = new GsonBuilder().setPrettyPrinting().disableHtmlEscaping()
      .create();
  private static final Gson COMPACT = new GsonBuilder().disableHtmlEscaping().create();

  final boolean json;

  ResourcePrinter(boolean json) {
    this.json = json;
  }

  /** {@code -o}: anything else is a usage error ({@link Choice.Outputs}). */
  enum Format { YAML, JSON }

  static ResourcePrinter forFormat(Format output) {
    return new ResourcePrinter(output == Format.JSON);
  }

  /** A resource as a JSON tree: proto3 JSON of its Any, so {@code @type} comes first. */
  static JsonElement tree(ResourceUpdate u) {
    try {
      String s = EnvoyTypeRegistry.get().printer().print(Any.pack(u.message()));
      return JsonParser.parseString(s);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("cannot print " + u.name() + ": " + e.getMessage(), e);
    }
  }

  /** Any message as a proto3 JSON tree (no {@code @type}). */
  JsonElement tree(com.google.protobuf.Message m) {
    try {
      return JsonParser.parseString(EnvoyTypeRegistry.get().printer().print(m));
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException(e);
    }
  }

  static Map<String, Object> entry(ResourceUpdate u) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", u.name());
    m.put("version", u.serverVersion());
    if (u.ttl() != null) {
      m.put("ttl", u.ttl().getSeconds() + "s");
    }
    m.put("resource", tree(u));
    return m;
  }

  /** One document: pretty JSON, or a YAML document. */
  String document(Map<String, Object> doc) {
    JsonElement tree = COMPACT.toJsonTree(doc);
    return json ? PRETTY.toJson(tree) : yaml(tree);
  }

  /** One line of JSON (for {@code watch -o json}), or a YAML document starting with ---. */
  String event(Map<String, Object> doc) {
    JsonElement tree = COMPACT.toJsonTree(doc);
    return json ? COMPACT.toJson(tree) : "---\n" + yaml(tree);
  }

  private static String yaml(JsonElement tree) {
    DumperOptions o = new DumperOptions();
    o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
    o.setIndicatorIndent(0);
    o.setWidth(120);
    Object plain = new Yaml().load(COMPACT.toJson(tree)); // JSON is YAML: plain maps and lists
    String out = new Yaml(o).dump(plain);
    return out.endsWith("\n") ? out.substring(0, out.length() - 1) : out;
  }
}
