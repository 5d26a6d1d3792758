package dev.meridian.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** xDS TP1 "URI-based xDS resource names", "Normalization" and "Glob"; gRFC A47. */
class XdstpNameTest {
  @Test
  void contextParametersAreSortedInTheCanonicalForm() {
    assertThat(XdstpName.parse("xdstp://a/t.T/id?b=2&a=1").canonical())
        .isEqualTo("xdstp://a/t.T/id?a=1&b=2");
    assertThat(XdstpName.parse("xdstp:///t.T/x/y").authority()).isEmpty();
    assertThat(XdstpName.parse("xdstp:///t.T/x/y").id()).isEqualTo("x/y");
  }

  @Test
  void percentEncodingsAreNormalizedPerRfc3986() {
    // Unreserved characters decoded, others kept with upper-case hex digits.
    assertThat(XdstpName.canonicalize("xdstp://a/t.T/%7ex%2fy?k=%41%3d"))
        .isEqualTo("xdstp://a/t.T/~x%2Fy?k=A%3D");
  }

  @Test
  void processingDirectivesAreNotPartOfTheName() {
    assertThat(XdstpName.canonicalize("xdstp://a/t.T/id?b=1#alt=xdstp://b/t.T/id"))
        .isEqualTo("xdstp://a/t.T/id?b=1");
  }

  @Test
  void canonicalizeKeepsOtherNamesAndTheSameInstances() {
    String plain = "cluster-a";
    String canonical = "xdstp://a/t.T/id?a=1";
    assertThat(XdstpName.canonicalize(plain)).isSameAs(plain);
    assertThat(XdstpName.canonicalize(canonical)).isSameAs(canonical);
    List<String> names = List.of(plain, canonical);
    assertThat(XdstpName.canonicalize(names)).isSameAs(names);
    assertThat(XdstpName.canonicalize(List.of(plain, "xdstp://a/t.T/id?b=2&a=1")))
        .containsExactly(plain, "xdstp://a/t.T/id?a=1&b=2");
    assertThat(XdstpName.canonicalize("xdstp://broken")).isEqualTo("xdstp://broken");
  }

  @Test
  void malformedNamesAreRefusedWithWhatIsWrong() {
    assertThatThrownBy(() -> XdstpName.parse("xdstp://a")).hasMessageContaining("resource type");
    assertThatThrownBy(() -> XdstpName.parse("xdstp://a/t.T")).hasMessageContaining("resource id");
    assertThatThrownBy(() -> XdstpName.parse("xdstp://a/t.T/")).hasMessageContaining("resource id");
    assertThatThrownBy(() -> XdstpName.parse("xdstp://a/t.T/x%zz"))
        .hasMessageContaining("percent-encoding");
    assertThatThrownBy(() -> XdstpName.parse("xdstp://a/t.T/x?k=1&k=2"))
        .hasMessageContaining("'k' twice");
  }

  @Test
  void aResourceBelongsToTheGlobCollectionOfItsDirectoryWithTheSameContext() {
    // TP1 "Glob": .../foo/*?some=thing matches .../foo/bar?some=thing, not .../foo/bar.
    assertThat(XdstpName.collectionOf("xdstp://a/t.T/foo/bar?some=thing"))
        .isEqualTo("xdstp://a/t.T/foo/*?some=thing");
    assertThat(XdstpName.collectionOf("xdstp://a/t.T/foo/bar"))
        .isEqualTo("xdstp://a/t.T/foo/*");
    assertThat(XdstpName.collectionOf("xdstp://a/t.T/foo/bar/baz"))
        .isEqualTo("xdstp://a/t.T/foo/bar/*");
    assertThat(XdstpName.collectionOf("xdstp://a/t.T/bar")).isEqualTo("xdstp://a/t.T/*");
    assertThat(XdstpName.collectionOf("xdstp://a/t.T/foo/*")).isNull();
    assertThat(XdstpName.collectionOf("plain")).isNull();
  }

  @Test
  void globsAreRecognizedWithOrWithoutContext() {
    assertThat(XdstpName.isGlob("xdstp://a/t.T/foo/*")).isTrue();
    assertThat(XdstpName.isGlob("xdstp://a/t.T/foo/*?k=v")).isTrue();
    assertThat(XdstpName.isGlob("xdstp://a/t.T/*")).isTrue();
    assertThat(XdstpName.isGlob("xdstp://a/t.T/foo*")).isFalse();
    assertThat(XdstpName.isGlob("xdstp://a/*")).isFalse();
    assertThat(XdstpName.isGlob("*")).isFalse();
    assertThat(XdstpName.parse("xdstp://a/t.T/foo/*").isGlob()).isTrue();
  }

  @Test
  void authorityOfReadsTheAuthority() {
    assertThat(XdstpName.authorityOf("xdstp://auth.example/t.T/x")).isEqualTo("auth.example");
    assertThat(XdstpName.authorityOf("xdstp:///t.T/x")).isEmpty();
    assertThat(XdstpName.authorityOf("plain")).isNull();
  }
}
