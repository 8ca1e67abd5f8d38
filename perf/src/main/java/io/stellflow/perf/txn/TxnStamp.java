package io.stellflow.perf.txn;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The stamp {@link CtpPipeline} writes into the first {@value #BYTES} bytes of each input value and
 * reads back from each output value: the send instant and a sequence number, both big-endian longs.
 *
 * <pre>
 *   offset 0  sentNs    8 bytes  System.nanoTime() when the input producer sent the record
 *   offset 8  sequence  8 bytes  the input record's number, 0, 1, 2, ... (finds duplicates and gaps)
 *   offset 16 payload   record size - 16 bytes, left as the caller filled it
 * </pre>
 *
 * Example: sentNs 0x0102030405060708 and sequence 5 give {@code 01 02 03 04 05 06 07 08 00 00 00 00
 * 00 00 00 05}. The send instant is only comparable within one JVM, which is why the pipeline's
 * three clients run in one. Stateless.
 */
final class TxnStamp {
    /** Bytes the stamp takes at the start of a value; the smallest record size of the ctp case. */
    static final int BYTES = 16;

    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private TxnStamp() {}

    /** Writes the stamp into {@code value}; throws IllegalArgumentException when it is shorter than {@value #BYTES}. */
    static void write(byte[] value, long sentNs, long sequence) {
        check(value);
        LONG.set(value, 0, sentNs);
        LONG.set(value, 8, sequence);
    }

    static long sentNs(byte[] value) {
        check(value);
        return (long) LONG.get(value, 0);
    }

    static long sequence(byte[] value) {
        check(value);
        return (long) LONG.get(value, 8);
    }

    private static void check(byte[] value) {
        if (value == null || value.length < BYTES) {
            throw new IllegalArgumentException("a stamped value needs at least " + BYTES + " bytes, got "
                    + (value == null ? "null" : value.length + " bytes"));
        }
    }
}
