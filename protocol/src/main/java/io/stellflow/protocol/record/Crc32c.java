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

    /**
     * The CRC-32C generator polynomial 0x1EDC6F41 bit-reversed: in the reflected form every CRC here
     * uses, bit 31 holds the coefficient of x^0 and bit 0 that of x^31.
     */
    private static final int POLYNOMIAL_REFLECTED = 0x82F63B78;

    /** The polynomial 1 (x^0) in the reflected form. */
    private static final int ONE = 1 << 31;

    /**
     * {@code X_POW_2_POW_K[k]} = x^(2^k) mod P, k = 0..63 (reflected), so that x^n for any 64-bit
     * n is a product of the entries of n's set bits.
     */
    private static final int[] X_POW_2_POW_K = new int[64];

    static {
        int xPow = ONE >>> 1; // x^1
        for (int k = 0; k < X_POW_2_POW_K.length; k++) {
            X_POW_2_POW_K[k] = xPow;
            xPow = multiplyModP(xPow, xPow);
        }
    }

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

    /**
     * Returns the CRC-32C of the concatenation A || B from the CRC-32C of A, that of B and B's length,
     * without reading either: the CRC register after A, shifted through {@code lengthB} zero bytes
     * (multiplied by x^(8 lengthB) modulo the polynomial), XOR the CRC of B. The initial and final
     * inversions of the standard CRC cancel in this sum, so both inputs and the result are ordinary
     * CRC-32C values ({@link #compute}). Costs at most 64 carry-less multiplications of 32 steps
     * (about a microsecond), whatever the length.
     *
     * <p>Why (issue #20): the producer sums a batch's records once, where it seals the batch, and
     * later stamps the 40 header bytes before them with its producer id and sequence; the batch's
     * CRC is then this combination of the header's CRC and the records' one, instead of a second pass
     * over up to megabytes of records on the sender thread.
     *
     * @param crcA CRC-32C of A (bits of an int)
     * @param crcB CRC-32C of B (bits of an int)
     * @param lengthB B's length in bytes (0 to 2^61 - 1: 8 lengthB must fit the 64 powers of the table)
     * @return CRC-32C of A || B as the bits of an int
     * @throws IllegalArgumentException if {@code lengthB} is negative or 2^61 or more
     */
    public static int combine(int crcA, int crcB, long lengthB) {
        if (lengthB < 0 || lengthB >= 1L << 61) {
            throw new IllegalArgumentException("lengthB outside 0..2^61-1: " + lengthB);
        }
        return multiplyModP(xPowEightTimes(lengthB), crcA) ^ crcB;
    }

    /** x^(8 n) mod P (reflected): the shift of a CRC register through n zero bytes. */
    private static int xPowEightTimes(long n) {
        int product = ONE;
        // 8 n = n << 3: bit i of n is bit i + 3 of the exponent.
        for (int k = 3; n != 0; n >>>= 1, k++) {
            if ((n & 1) != 0) {
                product = multiplyModP(X_POW_2_POW_K[k], product);
            }
        }
        return product;
    }

    /**
     * a(x) b(x) mod P for two reflected polynomials of degree below 32: for each power x^i present
     * in a (bit 31 - i), adds b x^i, where b is multiplied by x (one reflected shift, reduced by P)
     * once per step.
     */
    private static int multiplyModP(int a, int b) {
        int product = 0;
        for (int bit = ONE; bit != 0; bit >>>= 1) {
            if ((a & bit) != 0) {
                product ^= b;
            }
            b = (b & 1) != 0 ? (b >>> 1) ^ POLYNOMIAL_REFLECTED : b >>> 1;
        }
        return product;
    }
}
