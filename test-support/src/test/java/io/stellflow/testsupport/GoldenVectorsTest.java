package io.stellflow.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The resource files against the spec they were copied from, and the loader's format rules. */
class GoldenVectorsTest {
    private static final Map<String, String> VECTORS = Map.of(
            "G1", GoldenVectors.G1,
            "G3", GoldenVectors.G3,
            "G4", GoldenVectors.G4,
            "G5", GoldenVectors.G5,
            "G6", GoldenVectors.G6,
            "G7", GoldenVectors.G7);

    @Test
    void everyFrameVectorIsTheHexOfItsSectionInTheVendoredSpec() throws Exception {
        String spec = Files.readString(repositoryRoot().resolve("docs/spec/wire-protocol.md"));
        String goldenSection = spec.substring(spec.indexOf("## 10. Golden vectors"));
        VECTORS.forEach((name, hex) -> {
            // From "### G1 — ..." to the next heading: the section's one backtick span of hex digits.
            int start = goldenSection.indexOf("### " + name + " ");
            assertThat(start).as("%s in spec section 10", name).isNotNegative();
            int end = goldenSection.indexOf("\n### ", start + 1);
            String section = goldenSection.substring(start, end < 0 ? goldenSection.length() : end);
            Matcher m = Pattern.compile("`([0-9a-f]{16,})`").matcher(section);
            assertThat(m.find()).as("the hex of %s in spec section 10", name).isTrue();
            assertThat(hex).as(name).isEqualTo(m.group(1));
        });
    }

    @Test
    void g2IsTheBatchThatG3Carries() {
        assertThat(GoldenVectors.bytes(GoldenVectors.G2)).hasSize(144);
        // G3's records field starts at frame offset 66 (docs/spec/wire-protocol.md §10's G3 table).
        assertThat(GoldenVectors.G3.substring(2 * 66)).isEqualTo(GoldenVectors.G2);
    }

    @Test
    void storedG2PatchesOnlyTheOffsetDeltaAndTheLeaderEpoch() {
        String stored = GoldenVectors.storedG2(1);
        assertThat(stored).startsWith("00000001").hasSameSizeAs(GoldenVectors.G2);
        assertThat(stored.substring(16, 24)).isEqualTo("00000003");
        assertThat(stored.substring(24)).isEqualTo(GoldenVectors.G2.substring(24));
        assertThat(GoldenVectors.G7).contains(GoldenVectors.storedG2(0).substring(24));
    }

    @Test
    void theFileFormatSkipsCommentsAndWhitespaceAndRejectsWhatIsNotHex() {
        assertThat(GoldenVectors.parse("t", "# a comment: 12 zz\n00 0C\n\tab\n"))
                .isEqualTo("000cab");
        assertThatThrownBy(() -> GoldenVectors.parse("t", "00 0g"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not a hex digit 'g'");
        assertThatThrownBy(() -> GoldenVectors.parse("t", "000"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("3 hex digits");
        assertThatThrownBy(() -> GoldenVectors.hex("G99"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("golden/G99.hex");
    }

    private static Path repositoryRoot() throws Exception {
        Path dir = Path.of("").toAbsolutePath();
        for (int i = 0; i < 5 && dir != null; i++, dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("docs/spec/wire-protocol.md"))) {
                return dir;
            }
        }
        throw new IllegalStateException(
                "docs/spec/wire-protocol.md not found above " + Path.of("").toAbsolutePath());
    }
}
