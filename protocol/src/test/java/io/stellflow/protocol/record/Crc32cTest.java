package io.stellflow.protocol.record;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.support.Bufs;
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
}
