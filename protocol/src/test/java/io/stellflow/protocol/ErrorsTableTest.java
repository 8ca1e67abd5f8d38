package io.stellflow.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The error table ({@link Errors#entries}) against the documents it implements: the wire spec's
 * §8.1 table (codes 0..27: names, and "Java retries" is our retriable column) and §8.2 names with
 * their fallback column, and {@code docs/protocol-additions.md}, which allocates the codes from 28.
 * The spec is the repository's vendored {@code docs/spec/wire-protocol.md}, or the team's {@code
 * shared/spec/wire-protocol.md} beside the checkout, found by walking up from the working directory.
 */
class ErrorsTableTest {
    /**
     * A {@code docs/spec/wire-protocol.md} §8.1 row: code, name, whether the Java SDK retries it.
     */
    private record DocumentedRow(short code, String name, boolean javaRetries) {}

    /** A row of the allocation table in docs/protocol-additions.md: code, name, fallback code. */
    private record AllocatedRow(short code, String name, short fallback) {}

    private static Path locate(String... candidates) {
        Path dir = Path.of("").toAbsolutePath();
        for (int i = 0; i < 6 && dir != null; i++, dir = dir.getParent()) {
            for (String c : candidates) {
                Path candidate = dir.resolve(c);
                if (Files.isRegularFile(candidate)) {
                    return candidate;
                }
            }
        }
        throw new IllegalStateException(String.join(" or ", candidates) + " not found above "
                + Path.of("").toAbsolutePath());
    }

    private static List<String> section(Path file, String from, String to) throws IOException {
        List<String> lines = Files.readAllLines(file);
        int start = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (start < 0 && lines.get(i).startsWith(from)) {
                start = i + 1;
            } else if (start >= 0 && lines.get(i).startsWith(to)) {
                return lines.subList(start, i);
            }
        }
        throw new IllegalStateException("no section from '" + from + "' to '" + to + "' in " + file);
    }

    private static String[] cells(String row) {
        String[] raw = row.split("\\|");
        String[] cells = new String[raw.length - 1];
        for (int i = 1; i < raw.length; i++) {
            cells[i - 1] = raw[i].trim();
        }
        return cells;
    }

    private static Path spec() {
        return locate("docs/spec/wire-protocol.md", "shared/spec/wire-protocol.md");
    }

    private static List<DocumentedRow> documentedRows() throws IOException {
        List<DocumentedRow> rows = new ArrayList<>();
        for (String line : section(spec(), "### 8.1", "### 8.2")) {
            if (line.matches("\\| *\\d+ *\\|.*")) {
                String[] c = cells(line);
                rows.add(new DocumentedRow(Short.parseShort(c[0]), c[1], c[4].equals("yes")));
            }
        }
        return rows;
    }

    /**
     * {@code docs/spec/wire-protocol.md} §8.2's suggested names with the codes their fallback cell
     * names (parenthesised remarks dropped).
     */
    private static Map<String, List<Short>> suggestedFallbacks() throws IOException {
        Map<String, List<Short>> rows = new LinkedHashMap<>();
        for (String line : section(spec(), "**Suggested names**", "## 9.")) {
            if (line.matches("\\| *[A-Z_]+ *\\|.*")) {
                String[] c = cells(line);
                List<Short> codes = new ArrayList<>();
                Matcher m = Pattern.compile("\\b(\\d+)\\b").matcher(c[2].replaceAll("\\([^)]*\\)", ""));
                while (m.find()) {
                    codes.add(Short.parseShort(m.group(1)));
                }
                rows.put(c[0], codes);
            }
        }
        return rows;
    }

    private static List<AllocatedRow> allocatedRows() throws IOException {
        List<AllocatedRow> rows = new ArrayList<>();
        Path additions = locate("docs/protocol-additions.md");
        for (String line : section(additions, "## Error codes allocated from 28", "## ")) {
            if (line.matches("\\| *\\d+ *\\|.*")) {
                String[] c = cells(line);
                Matcher fallback = Pattern.compile("^(\\d+) ").matcher(c[4]);
                assertThat(fallback.find()).as("fallback cell of %s", c[1]).isTrue();
                rows.add(new AllocatedRow(Short.parseShort(c[0]), c[1], Short.parseShort(fallback.group(1))));
            }
        }
        return rows;
    }

    @Test
    void everyDocumentedCodeIsInTheTableWithItsNameAndTheJavaRetriesColumn() throws IOException {
        List<DocumentedRow> rows = documentedRows();
        assertThat(rows).hasSize(Errors.MAX_DOCUMENTED + 1);
        for (DocumentedRow row : rows) {
            Errors.Entry e = Errors.entry(row.code());
            assertThat(e).as("code %d", row.code()).isNotNull();
            assertThat(e.name()).isEqualTo(row.name());
            assertThat(e.retriable()).as("%s retriable", row.name()).isEqualTo(row.javaRetries());
            assertThat(e.v0Fallback()).as("%s is sent as itself", row.name()).isEqualTo(row.code());
        }
    }

    @Test
    void everyCodeFrom28IsAllocatedInTheAdditionsPageWithItsFallback() throws IOException {
        List<AllocatedRow> rows = allocatedRows();
        assertThat(rows).isNotEmpty();
        for (AllocatedRow row : rows) {
            Errors.Entry e = Errors.entry(row.code());
            assertThat(e).as("code %d", row.code()).isNotNull();
            assertThat(e.name()).isEqualTo(row.name());
            assertThat(e.v0Fallback()).as("%s fallback", row.name()).isEqualTo(row.fallback());
            assertThat(e.v0Fallback()).isLessThanOrEqualTo(Errors.MAX_DOCUMENTED);
        }
        // The table holds exactly the documented and the allocated codes, nothing else.
        assertThat(Errors.entries()).hasSize(Errors.MAX_DOCUMENTED + 1 + rows.size());
        assertThat(Errors.entries().getLast().code()).isEqualTo(Errors.MAX_ALLOCATED);
    }

    /**
     * Codes of our own group protocol ({@code docs/protocol-additions.md}, issue #19) that the spec's
     * §8.2 does not suggest: allowed by name here, so any other code must still come from §8.2.
     */
    private static final List<String> OWN_GROUP_CODES = List.of(
            "FENCED_MEMBER_EPOCH",
            "STALE_MEMBER_EPOCH",
            "NON_EMPTY_GROUP",
            "UNRELEASED_INSTANCE_ID",
            "GROUP_SUBSCRIBED_TO_TOPIC",
            "UNSUPPORTED_ASSIGNOR",
            "GROUP_MAX_SIZE_REACHED");

    @Test
    void allocatedCodesUseTheSpecsSuggestedNamesAndOneOfTheirFallbacks() throws IOException {
        Map<String, List<Short>> suggested = suggestedFallbacks();
        assertThat(suggested).containsKeys("NOT_ENOUGH_REPLICAS", "STORAGE_ERROR", "INVALID_TIMESTAMP");
        assertThat(suggested).doesNotContainKeys(OWN_GROUP_CODES.toArray(String[]::new));
        for (Errors.Entry e : Errors.entries()) {
            if (e.code() <= Errors.MAX_DOCUMENTED || OWN_GROUP_CODES.contains(e.name())) {
                continue;
            }
            assertThat(suggested).as("§8.2 names %s", e.name()).containsKey(e.name());
            assertThat(suggested.get(e.name())).as("%s fallback", e.name()).contains(e.v0Fallback());
        }
    }

    @Test
    void groupCodesFallBackToCodesTheSdksHandleAndOnlyStaleMemberEpochIsRetriable() {
        for (short code = Errors.UNKNOWN_MEMBER_ID; code <= Errors.ILLEGAL_GENERATION; code++) {
            Errors.Entry e = Errors.entry(code);
            assertThat(e).as("code %d", code).isNotNull();
            assertThat(e.v0Fallback())
                    .as(e.name())
                    .isIn(Errors.UNKNOWN_SERVER_ERROR, Errors.INVALID_REQUEST, Errors.FENCED_INSTANCE_ID);
            assertThat(e.retriable()).as(e.name()).isEqualTo(code == Errors.STALE_MEMBER_EPOCH);
        }
        // The spec's own fallbacks for the three it names (§8.2, §6.9): the Go SDK rejoins on 1.
        assertThat(Errors.v0Fallback(Errors.UNKNOWN_MEMBER_ID)).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
        assertThat(Errors.v0Fallback(Errors.GROUP_ID_NOT_FOUND)).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
        assertThat(Errors.v0Fallback(Errors.ILLEGAL_GENERATION)).isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
    }

    @Test
    void staleMetadataCodesAreRetriableAndCodesOutsideTheTableAreNeither() {
        for (Errors.Entry e : Errors.entries()) {
            if (e.staleMetadata()) {
                assertThat(e.retriable()).as(e.name()).isTrue();
            }
            assertThat(Errors.isRetriable(e.code())).isEqualTo(e.retriable());
            assertThat(Errors.isStaleMetadata(e.code())).isEqualTo(e.staleMetadata());
        }
        assertThat(Errors.entries())
                .filteredOn(Errors.Entry::staleMetadata)
                .extracting(Errors.Entry::code)
                .containsExactly(
                        Errors.LEADER_NOT_AVAILABLE,
                        Errors.NOT_LEADER_OR_FOLLOWER,
                        Errors.UNKNOWN_TOPIC_OR_PARTITION,
                        Errors.FENCED_LEADER_EPOCH,
                        Errors.UNKNOWN_LEADER_EPOCH);
        for (short code : new short[] {-1, 35, 39, Errors.MAX_ALLOCATED + 1, Short.MAX_VALUE}) {
            assertThat(Errors.entry(code)).isNull();
            assertThat(Errors.isRetriable(code)).isFalse();
            assertThat(Errors.isStaleMetadata(code)).isFalse();
            assertThat(Errors.v0Fallback(code)).isEqualTo(code);
        }
    }
}
