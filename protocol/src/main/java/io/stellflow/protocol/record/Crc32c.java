package io.stellflow.protocol.record;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * CRC-32C (Castagnoli) over a region of a {@link ByteBuf} without copying ({@code
 * docs/spec/wire-protocol.md} §7.3): heap buffers through their backing array, direct and composite
 * buffers through {@link ByteBuf#nioBuffers(int, int)} views. Check value: ASCII {@code 123456789}
 * gives 0xE3069283.
 *
 * <p>Thread-safety: stateless (one {@link CRC32C} per thread, reset per call). Indexes of the buffer
 * are not changed.
 */
public final class Crc32c {
    private static final ThreadLocal<CRC32C> CRC = ThreadLocal.withInitial(CRC32C::new);

    private Crc32c() {}

    /**
     * Returns the CRC-32C of {@code length} bytes at absolute {@code index} as the bits of an int.
     *
     * @throws IndexOutOfBoundsException if the region is outside the buffer
     */
    public static int compute(ByteBuf buf, int index, int length) {
        CRC32C crc = CRC.get();
        crc.reset();
        if (buf.hasArray()) {
            if (index < 0 || length < 0 || index > buf.capacity() - length) {
                throw new IndexOutOfBoundsException(
                        "index " + index + " length " + length + " capacity " + buf.capacity());
            }
            crc.update(buf.array(), buf.arrayOffset() + index, length);
        } else if (buf.nioBufferCount() == 1) {
            crc.update(buf.nioBuffer(index, length));
        } else {
            for (ByteBuffer part : buf.nioBuffers(index, length)) {
                crc.update(part);
            }
        }
        return (int) crc.getValue();
    }

    /**
     * Returns the CRC-32C of {@code length} bytes at absolute {@code index} of an NIO buffer as the bits
     * of an int; the buffer's position and limit are not changed.
     *
     * @throws IndexOutOfBoundsException if the region is outside the buffer's limit
     */
    public static int compute(ByteBuffer buf, int index, int length) {
        CRC32C crc = CRC.get();
        crc.reset();
        crc.update(buf.slice(index, length));
        return (int) crc.getValue();
    }
}
