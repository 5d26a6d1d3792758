package dev.meridian.internal.config;

import dev.meridian.internal.protocol.ServedConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * The checks {@code serve} runs on every config it loads, at start and on each reload. One
 * function, called by the server and by {@code meridian validate}, so that validate says exactly
 * what serve would do (issue 18, section 4).
 */
public final class ConfigChecks {
  private ConfigChecks() {}

  /** Which check found something; its label starts the finding's line in logs and output. */
  public enum Check {
    /** Not one resource in any group: every client would be sent an empty config. */
    EMPTY_CONFIG("empty config"),
    /** {@link ReferenceCheck}: a reference a client would wait on forever. */
    DANGLING_REFERENCE("dangling reference"),
    /** {@link GrpcProfile}, for a config with API listeners (meant for proxyless gRPC). */
    GRPC_PROFILE("grpc profile"),
    /**
     * {@link InlineKeys}: key material inlined outside a Secret goes to every client of its
     * group; a warning, refused under mTLS, where Secrets are sent by identity.
     */
    INLINE_KEY("inline key material"),
    /**
     * An identity glob of wildcards alone ({@code *}): it matches host names only, since globs are
     * typed ({@code Identity}); before, it matched SPIFFE IDs too.
     */
    IDENTITY_GLOB("identity glob");

    final String label;

    Check(String label) {
      this.label = label;
    }
  }

  public record Finding(Check check, String message) {
    @Override
    public String toString() {
      return check.label + ": " + message;
    }
  }

  /**
   * What the checks found. A rejected config is not served (at start serve exits; on reload the
   * last good config stays): {@code rejections} say why, and nothing else is checked.
   */
  public record Result(List<Finding> warnings, List<Finding> rejections) {
    public boolean rejected() {
      return !rejections.isEmpty();
    }

    /**
     * The rules that refused the config, for the first line of the refusal; {@code mtlsFlag}: how
     * the caller's user turned mTLS on ({@code --tls-client-ca}, {@code --mtls}).
     */
    public String rejectedBy(String mtlsFlag) {
      return rejections.stream().map(f -> f.check() == Check.INLINE_KEY
          ? mtlsFlag + ": key material only in Secrets" : "--reference-check reject")
          .distinct().collect(java.util.stream.Collectors.joining("; "));
    }

    /** The rejections' messages, as a {@link ConfigException} carries them. */
    public List<String> rejectionMessages() {
      return rejections.stream().map(Finding::message).toList();
    }
  }

  /**
   * Identity globs of wildcards alone, in groups' {@code match} and in {@code secret_access}: a
   * config written when {@code *} matched any identity would now turn SPIFFE clients away.
   */
  static List<Finding> wildcardIdentityGlobs(ServedConfig config) {
    java.util.Set<String> where = new java.util.LinkedHashSet<>();
    for (ServedConfig.Group g : config.groups()) {
      String glob = g.matcher() == null ? null : g.matcher().identityGlob();
      if (isWildcards(glob)) {
        where.add("group '" + g.name() + "' match.identity '" + glob + "'");
      }
    }
    for (dev.meridian.internal.protocol.SecretAccess.Rule r : config.secretAccess().rules()) {
      for (String glob : r.identities()) {
        if (isWildcards(glob)) {
          where.add("secret_access for '" + r.secrets() + "' identity '" + glob + "'");
        }
      }
    }
    List<Finding> found = new ArrayList<>();
    for (String w : where) {
      found.add(new Finding(Check.IDENTITY_GLOB, w + " matches host names (DNS SANs) only, not "
          + "SPIFFE IDs: a glob without '://' is a DNS glob. For any SPIFFE ID write "
          + "'spiffe://*'; for both, a second group or rule"));
    }
    return found;
  }

  private static boolean isWildcards(String glob) {
    return glob != null && !glob.isEmpty() && glob.chars().allMatch(c -> c == '*' || c == '?');
  }

  /** Runs serve's checks on {@code config} with serve's {@code --reference-check} mode. */
  public static Result run(ServedConfig config, ReferenceCheck referenceCheck) {
    return run(config, referenceCheck, false);
  }

  /**
   * Runs serve's checks; {@code mtls}: serve runs with {@code --tls-client-ca}, where inline key
   * material outside Secrets is refused rather than warned about.
   */
  public static Result run(ServedConfig config, ReferenceCheck referenceCheck, boolean mtls) {
    return run(config, referenceCheck, mtls, new InlineKeys.Memo());
  }

  /**
   * As {@link #run(ServedConfig, ReferenceCheck, boolean)}, for a server's loads in turn: {@code
   * memo} remembers the resources the last one looked into (see {@link InlineKeys.Memo}).
   */
  public static Result run(ServedConfig config, ReferenceCheck referenceCheck, boolean mtls,
      InlineKeys.Memo memo) {
    List<Finding> inline = new ArrayList<>();
    for (InlineKeys.Found f : InlineKeys.find(config, memo)) {
      inline.add(new Finding(Check.INLINE_KEY, f.message(mtls)));
    }
    List<Finding> dangling = new ArrayList<>();
    if (referenceCheck != ReferenceCheck.OFF) {
      for (String p : ReferenceCheck.problems(config)) {
        dangling.add(new Finding(Check.DANGLING_REFERENCE, p));
      }
    }
    List<Finding> rejections = new ArrayList<>();
    if (mtls) {
      rejections.addAll(inline);
    }
    if (referenceCheck == ReferenceCheck.REJECT) {
      rejections.addAll(dangling);
    }
    if (!rejections.isEmpty()) {
      return new Result(List.of(), List.copyOf(rejections));
    }
    List<Finding> warnings = new ArrayList<>(inline);
    warnings.addAll(wildcardIdentityGlobs(config));
    if (config.resourceCount() == 0) {
      warnings.add(new Finding(Check.EMPTY_CONFIG,
          "no resources at all: every client would be sent an empty config"));
    }
    warnings.addAll(dangling);
    // What grpc-java would NACK or ignore is a warning here, not a reason to refuse (issue 5).
    if (GrpcProfile.servesGrpcClients(config)) {
      for (GrpcProfile.Finding f : GrpcProfile.check(config)) {
        warnings.add(new Finding(Check.GRPC_PROFILE, f.toString()));
      }
    }
    return new Result(List.copyOf(warnings), List.of());
  }
}
