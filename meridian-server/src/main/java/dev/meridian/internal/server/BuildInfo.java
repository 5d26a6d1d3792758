package dev.meridian.internal.server;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The build's version and git commit (issue 24), for {@code meridian version} and
 * {@code GET /version}. Both come from resources written at build time: the Maven project version
 * through resource filtering ({@code dev/meridian/build/meridian-build.properties}) and the commit
 * by git-commit-id-maven-plugin ({@code dev/meridian/build/git.properties}). Either is
 * {@code "unknown"} when missing, e.g. the commit of a build from a source tarball without
 * {@code .git}.
 */
public record BuildInfo(String version, String commit) {
  public static final String UNKNOWN = "unknown";
  private static final BuildInfo CURRENT = load();

  /** This build's. */
  public static BuildInfo current() {
    return CURRENT;
  }

  static BuildInfo load() {
    Properties build = read("/dev/meridian/build/meridian-build.properties");
    Properties git = read("/dev/meridian/build/git.properties");
    return new BuildInfo(value(build.getProperty("version")), value(git.getProperty("git.commit.id")));
  }

  /** As one JSON object: {@code {"version": "...", "commit": "..."}}. */
  public String json() {
    com.google.gson.JsonObject o = new com.google.gson.JsonObject();
    o.addProperty("version", version);
    o.addProperty("commit", commit);
    return new com.google.gson.GsonBuilder().disableHtmlEscaping().create().toJson(o);
  }

  /** An unfiltered {@code ${...}} (a build outside Maven) or an empty value is unknown too. */
  private static String value(String v) {
    return v == null || v.isBlank() || v.startsWith("${") ? UNKNOWN : v.trim();
  }

  private static Properties read(String resource) {
    Properties p = new Properties();
    try (InputStream in = BuildInfo.class.getResourceAsStream(resource)) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      // unknown, as if missing
    }
    return p;
  }
}
