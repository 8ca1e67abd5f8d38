package io.stellflow.protocol.message;

import static io.stellflow.protocol.support.Bufs.hexOf;
import static io.stellflow.protocol.support.ProtocolAssertions.assertProtocolError;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.support.Bufs;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * A golden body for the exact-byte tests: a message, how to write and read it at one version, and
 * the expected hex built by hand from the layout table, one piece per field.
 */
record BodyGolden(
        String name, Object message, BiConsumer<ByteBuf, Object> writer, Function<ByteBuf, Object> reader, String hex) {

    /** The hex of a non-null string: int16 length, then the ASCII bytes. */
    static String str(String ascii) {
        StringBuilder s = new StringBuilder(String.format("%04x", ascii.length()));
        for (char c : ascii.toCharArray()) {
            s.append(String.format("%02x", (int) c));
        }
        return s.toString();
    }

    /** A null string or nullable string (length -1). */
    static final String NULL_STRING = "ffff";

    /** A null nullable array (count -1). */
    static final String NULL_ARRAY = "ffffffff";

    /** A golden of a single-layout message ({@link ApiMessage#write}, {@code read(ByteBuf)}). */
    static BodyGolden of(String name, ApiMessage m, Function<ByteBuf, Object> reader, String hex) {
        return new BodyGolden(name, m, (out, x) -> ((ApiMessage) x).write(out), reader, hex);
    }

    /** Every golden encodes to exactly its hex and decodes back to an equal message. */
    static void assertEncodesAndDecodes(List<BodyGolden> goldens, Bufs bufs) {
        for (BodyGolden g : goldens) {
            ByteBuf out = bufs.heap();
            g.writer().accept(out, g.message());
            assertThat(hexOf(out)).as(g.name()).isEqualTo(g.hex());
            assertThat(g.reader().apply(bufs.hex(g.hex()))).as(g.name()).isEqualTo(g.message());
        }
    }

    /** Every golden with one trailing byte, and every truncation of it, is INVALID_REQUEST. */
    static void assertStrict(List<BodyGolden> goldens, Bufs bufs) {
        for (BodyGolden g : goldens) {
            ByteBuf trailing = bufs.hex(g.hex() + "00");
            assertProtocolError(() -> g.reader().apply(trailing), Errors.INVALID_REQUEST);
            for (int cut = 0; cut < g.hex().length() / 2; cut++) {
                ByteBuf truncated = bufs.hex(g.hex().substring(0, 2 * cut));
                assertProtocolError(() -> g.reader().apply(truncated), Errors.INVALID_REQUEST);
            }
        }
    }
}
