/**
 * The xDS vocabulary shared by Meridian's server embedding API ({@code dev.meridian.server}) and
 * its client library ({@code dev.meridian.client}). Everything under {@code dev.meridian.internal}
 * is implementation.
 */
package dev.meridian.xds;
