/**
 * An xDS client: {@link dev.meridian.client.XdsClient} reads a bootstrap, connects to management
 * servers over State of the World or Incremental xDS and hands watched resources to
 * {@link dev.meridian.client.ResourceWatcher}s. See docs/client.md.
 */
package dev.meridian.client;
