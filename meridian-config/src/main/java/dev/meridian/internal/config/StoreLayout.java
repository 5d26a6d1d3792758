package dev.meridian.internal.config;

import dev.meridian.xds.ResourceType;
import dev.meridian.internal.protocol.ServedConfig;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Where a config lives in a key-value store (etcd; docs/etcd.md, a contract): under a prefix,
 * <pre>
 *   PREFIX/resources/GROUP/TYPE/NAME   one resource, as JSON ("@type" included)
 *   PREFIX/groups/GROUP                one group definition: {"match": {...}, "order": N}
 *   PREFIX/secret_access               the secret_access rules, as a JSON list
 * </pre>
 * GROUP is {@code default} for the top-level resources, TYPE a short type name ({@code clusters},
 * {@code endpoints}, ...) and NAME the resource's name as written (it may contain {@code /}). In
 * GROUP, {@code %} and {@code /} are percent-encoded. One resource is one key, so a one-resource
 * edit is a one-key write.
 */
public final class StoreLayout {
  static final String RESOURCES = "resources/";
  static final String GROUPS = "groups/";
  static final String SECRET_ACCESS = "secret_access";

  private final String prefix;

  /** A key of the layout. */
  public sealed interface Key permits ResourceKey, GroupKey, SecretAccessKey, Unknown {}

  public record ResourceKey(String group, ResourceType type, String name) implements Key {}

  public record GroupKey(String group) implements Key {}

  public record SecretAccessKey() implements Key {}

  /** A key under the prefix that the layout has no place for. */
  public record Unknown(String why) implements Key {}

  /** @param prefix the store path, e.g. {@code /meridian}; a trailing {@code /} is implied */
  public StoreLayout(String prefix) {
    this.prefix = prefix.endsWith("/") ? prefix : prefix + "/";
  }

  /** The prefix every key starts with, ending in {@code /}. */
  public String prefix() {
    return prefix;
  }

  public String resourceKey(String group, ResourceType type, String name) {
    return prefix + RESOURCES + encode(group) + "/" + type.shortName() + "/" + name;
  }

  public String groupKey(String group) {
    return prefix + GROUPS + encode(group);
  }

  public String secretAccessKey() {
    return prefix + SECRET_ACCESS;
  }

  /** What {@code key} (a full key under the prefix) holds. */
  public Key parse(String key) {
    if (!key.startsWith(prefix)) {
      return new Unknown("not under the prefix " + prefix);
    }
    String rest = key.substring(prefix.length());
    if (rest.equals(SECRET_ACCESS)) {
      return new SecretAccessKey();
    }
    if (rest.startsWith(GROUPS)) {
      String group = rest.substring(GROUPS.length());
      if (group.isEmpty() || group.contains("/")) {
        return new Unknown("a group definition's key is " + prefix + GROUPS + "GROUP");
      }
      return decode(group).<Key>map(GroupKey::new)
          .orElse(new Unknown("bad percent-encoding in the group name"));
    }
    if (rest.startsWith(RESOURCES)) {
      String[] parts = rest.substring(RESOURCES.length()).split("/", 3);
      if (parts.length < 3 || parts[0].isEmpty() || parts[2].isEmpty()) {
        return new Unknown("a resource's key is " + prefix + RESOURCES + "GROUP/TYPE/NAME");
      }
      Optional<ResourceType> type = ResourceType.all().stream()
          .filter(t -> t.shortName().equals(parts[1])).findFirst();
      if (type.isEmpty()) {
        return new Unknown("unknown type '" + parts[1] + "' (expected one of "
            + ResourceType.all().stream().map(ResourceType::shortName).toList() + ")");
      }
      Optional<String> group = decode(parts[0]);
      if (group.isEmpty()) {
        return new Unknown("bad percent-encoding in the group name");
      }
      return new ResourceKey(group.get(), type.get(), parts[2]);
    }
    return new Unknown("not a key of Meridian's layout (" + prefix + RESOURCES + "..., "
        + prefix + GROUPS + "..., " + prefix + SECRET_ACCESS + "; docs/etcd.md)");
  }

  /** The group of the top-level resources. */
  public static String defaultGroup() {
    return ServedConfig.DEFAULT_GROUP;
  }

  static String encode(String group) {
    return group.replace("%", "%25").replace("/", "%2F");
  }

  static Optional<String> decode(String segment) {
    if (!segment.contains("%")) {
      return Optional.of(segment);
    }
    try {
      // Only %25 and %2F are produced; any valid escape is accepted.
      return Optional.of(java.net.URLDecoder.decode(segment.replace("+", "%2B"),
          StandardCharsets.UTF_8));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }
}
