package dev.meridian.internal.config;

/**
 * A config that loads and passes its checks but is held: it would empty what is served (see
 * {@link Emptying}), and emptyings are not allowed. The last good config stays in force, as for
 * any config that cannot be served; {@link #problems} name what it would remove.
 */
public final class ConfigHeld extends ConfigException {
  private final Emptying.Found found;

  public ConfigHeld(Emptying.Found found) {
    super(found.all());
    this.found = found;
  }

  /** What it would empty: {@link Emptying.Found#holding} are why it is held. */
  public Emptying.Found found() {
    return found;
  }
}
