package dev.meridian.internal.protocol;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Who may receive which Secret (issue 20). A Secret goes only to a stream with a verified identity
 * (unless plaintext secrets were allowed for local development); the rules whose {@code secrets}
 * glob matches its name narrow that to their identity globs. A Secret no rule names goes to any
 * verified identity placed in its group (whose own {@code match.identity} already applies).
 * Identity globs are typed ({@link Identity}).
 */
public final class SecretAccess {
  /** Secrets whose name matches {@code secrets} go only to identities matching one of {@code identities}. */
  public record Rule(String secrets, List<String> identities) {
    public Rule {
      identities = List.copyOf(identities);
    }
  }

  public static final SecretAccess NONE = new SecretAccess(List.of());

  private final List<Rule> rules;
  private final List<Pattern> secretPatterns;
  private final List<List<Identity.Glob>> identityPatterns;

  public SecretAccess(List<Rule> rules) {
    this.rules = List.copyOf(rules);
    this.secretPatterns = this.rules.stream().map(r -> NodeMatcher.glob(r.secrets())).toList();
    this.identityPatterns = this.rules.stream()
        .map(r -> r.identities().stream().map(Identity.Glob::new).toList()).toList();
  }

  public List<Rule> rules() {
    return rules;
  }

  /**
   * Whether a stream whose verified identity is {@code identity} (null: none) may have the Secret
   * {@code name}; {@code plaintext}: streams without an identity get Secrets (opted in).
   */
  public boolean allows(String name, String identity, boolean plaintext) {
    if (identity == null) {
      return plaintext;
    }
    boolean named = false;
    for (int i = 0; i < rules.size(); i++) {
      if (secretPatterns.get(i).matcher(name).matches()) {
        named = true;
        for (Identity.Glob p : identityPatterns.get(i)) {
          if (p.matches(identity)) { // typed: a URI glob never takes a DNS name, nor the reverse
            return true;
          }
        }
      }
    }
    return !named;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SecretAccess other && rules.equals(other.rules);
  }

  @Override
  public int hashCode() {
    return rules.hashCode();
  }

  @Override
  public String toString() {
    return rules.toString();
  }
}
