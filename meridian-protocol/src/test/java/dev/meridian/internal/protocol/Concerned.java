package dev.meridian.internal.protocol;

import dev.meridian.xds.ResourceType;

import java.util.Map;
import java.util.Set;

/**
 * The fan-out index's promise (DESIGN "Fan-out", issue 19): a change that a stream's
 * {@link XdsStream.Interest} says does not concern it may be skipped with no difference in what
 * the stream ever sends. The peers hand their plain twin only the changes that concern it (as a
 * hub's index does) and the stream under test every change; their outcomes must stay the same.
 */
final class Concerned {
  private Concerned() {}

  static boolean concerns(XdsStream<?, ?> stream, ServedConfig next,
      Map<String, Map<ResourceType, Set<String>>> changes) {
    XdsStream.Interest interest = stream.interest();
    if (interest.group() == null) {
      return false; // no request yet: nothing to act on
    }
    ServedConfig.Placement p = next.place(stream.node(), stream.identity());
    if (p.isDenied() || !p.group().equals(interest.group())
        || !next.secretAccess().equals(stream.secretAccess())) {
      return true; // the hub hands every stream the change when groups are redefined
    }
    for (var e : changes.getOrDefault(interest.group(), Map.of()).entrySet()) {
      if (interest.concerns(e.getKey(), e.getValue())) {
        return true;
      }
    }
    return false;
  }
}
