package io.stellflow.protocol.record;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.support.Bufs;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * CRC-32C check value ({@code docs/spec/wire-protocol.md} §7.3) on every buffer kind, at a non-zero
 * index.
 */
class Crc32cTest {
    private final Bufs bufs = new Bufs();

    @AfterEach
    void releaseBuffers() {
        bufs.close();
    }

    @Test
    void checkValueOf123456789IsE3069283OnHeapDirectAndCompositeBuffers() {
        ByteBuf heap = bufs.heap().writeBytes("xx123456789yy".getBytes(US_ASCII));
        assertThat(Crc32c.compute(heap, 2, 9)).isEqualTo(0xE3069283);
        assertThat(Crc32c.compute(bufs.directCopy(heap), 2, 9)).isEqualTo(0xE3069283);
        ByteBuf composite = bufs.composite(heap, 6);
        assertThat(composite.nioBufferCount()).isGreaterThan(1);
        assertThat(Crc32c.compute(composite, 2, 9)).isEqualTo(0xE3069283);
        ByteBuf slice = heap.slice(1, 11);
        assertThat(Crc32c.compute(slice, 1, 9)).isEqualTo(0xE3069283);
        assertThat(heap.readerIndex()).isZero();
    }

    @Test
    void emptyRegionHasCrcZero() {
        assertThat(Crc32c.compute(bufs.heap(), 0, 0)).isZero();
    }

    /** combine(crc(A), crc(B), |B|) is crc(A || B) for the check value split at every point. */
    @Test
    void combineOfTheCheckValuesPartsIsTheCheckValue() {
        ByteBuf buf = bufs.heap().writeBytes("123456789".getBytes(US_ASCII));
        for (int split = 0; split <= 9; split++) {
            int a = Crc32c.compute(buf, 0, split);
            int b = Crc32c.compute(buf, split, 9 - split);
            assertThat(Crc32c.combine(a, b, 9 - split)).as("split at %d", split).isEqualTo(0xE3069283);
        }
    }

    /**
     * Random contents and splits up to 3 MiB (lengths whose bits reach every table entry a batch of
     * the broker's sizes uses), each against one pass over the whole: the producer's stamp relies on it.
     */
    @Test
    void combineMatchesOnePassOverTheWholeForRandomSplits() {
        SplittableRandom random = new SplittableRandom(20261206L);
        byte[] bytes = new byte[3 << 20];
        random.nextBytes(bytes);
        ByteBuf buf = bufs.heap().writeBytes(bytes);
        int[] lengths = {0, 1, 2, 7, 40, 57, 1000, 65_536, 1 << 20, (1 << 20) + 12_345, 3 << 20};
        for (int total : lengths) {
            for (int round = 0; round < 4; round++) {
                int split = total == 0 ? 0 : random.nextInt(total + 1);
                int whole = Crc32c.compute(buf, 0, total);
                int combined = Crc32c.combine(
                        Crc32c.compute(buf, 0, split), Crc32c.compute(buf, split, total - split), total - split);
                assertThat(combined).as("%d bytes split at %d", total, split).isEqualTo(whole);
            }
        }
    }

    @Test
    void combineWithAnEmptySecondPartIsTheFirstCrcAndALengthOutsideItsRangeIsABug() {
        assertThat(Crc32c.combine(0x12345678, 0, 0)).isEqualTo(0x12345678);
        assertThatThrownBy(() -> Crc32c.combine(1, 2, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lengthB outside");
        assertThatThrownBy(() -> Crc32c.combine(1, 2, 1L << 61))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lengthB outside");
        // The largest length reaches the table's last entry without an index error.
        assertThat(Crc32c.combine(0, 0, (1L << 61) - 1)).isZero();
    }
}
