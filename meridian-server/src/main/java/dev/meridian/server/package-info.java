/**
 * Meridian embedded in a Java application: {@link dev.meridian.server.Meridian} serves over xDS
 * what the application publishes through its {@link dev.meridian.server.Publisher}. See
 * docs/embedding.md.
 */
package dev.meridian.server;
