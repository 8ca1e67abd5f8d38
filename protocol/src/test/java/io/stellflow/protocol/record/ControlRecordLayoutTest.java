package io.stellflow.protocol.record;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.stellflow.protocol.Errors;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class ControlRecordLayoutTest {
    private static final long TS = 1746768000000L;

    @Test
    void commitMarkerHasTheDocumentedGoldenBytes() {
        ByteBuf b = Unpooled.buffer();
        ControlRecordLayout.write(b, ControlRecordLayout.COMMIT, 7, (short) 2, 5, 9, TS);
        // The class javadoc's worked example, byte for byte; the CRC is checked separately below.
        String expected = "00000000" + "00000060" + "ffffffff" + "01" + "CRC_" + "0030" + "00000000"
                + "00000196b37c7400" + "00000196b37c7400" + "0000000000000007" + "0002" + "ffffffff"
                + "00000001" // recordCount
                + "0000002b" + "00" + "0000000000000000" + "00000000" // length 43, attrs, tsDelta, offsetDelta
                + "00000004" + "0000" + "0001" // key: version 0, type COMMIT
                + "0000000e" + "0000" + "00000005" + "0000000000000009" // value
                + "00000000"; // headerCount
        assertEquals(ControlRecordLayout.BATCH_SIZE, b.readableBytes());
        String hex = ByteBufUtil.hexDump(b);
        assertEquals(expected.replace("CRC_", hex.substring(26, 34)), hex);
        CRC32C crc = new CRC32C();
        byte[] bytes = ByteBufUtil.getBytes(b);
        crc.update(bytes, 17, bytes.length - 17);
        assertEquals((int) crc.getValue(), RecordBatchLayout.crc(b, 0));
    }

    @Test
    void everyTypeRoundTripsThroughTheReader() {
        for (short type :
                new short[] {ControlRecordLayout.ABORT, ControlRecordLayout.COMMIT, ControlRecordLayout.BEGIN}) {
            ByteBuf b = ControlRecordLayout.build(PooledByteBufAllocator.DEFAULT, type, 42L, (short) 3, -1, 77L, TS);
            try {
                assertNull(ControlRecordLayout.invalidReason(b, 0, b.readableBytes()));
                assertTrue(ControlRecordLayout.isControl(b, 0));
                assertEquals(type, ControlRecordLayout.type(b, 0));
                assertEquals(-1, ControlRecordLayout.coordinatorEpoch(b, 0));
                assertEquals(77L, ControlRecordLayout.transactionSequence(b, 0));
                assertEquals(42L, RecordBatchLayout.producerId(b, 0));
                assertEquals(3, RecordBatchLayout.producerEpoch(b, 0));
                assertEquals(
                        ControlRecordLayout.ATTRIBUTES,
                        RecordBatchLayout.attributes(b, 0)
                                & (RecordBatchLayout.CONTROL_FLAG_MASK | RecordBatchLayout.TRANSACTIONAL_FLAG_MASK));
                assertEquals(RecordBatchLayout.computeCrc(b, 0), RecordBatchLayout.crc(b, 0));
            } finally {
                b.release();
            }
        }
    }

    @Test
    void producersStillCannotSendControlBatches() {
        ByteBuf b = Unpooled.buffer();
        ControlRecordLayout.write(b, ControlRecordLayout.COMMIT, 7, (short) 0, 0, 0, TS);
        assertEquals(Errors.INVALID_RECORD, RecordBatchValidator.validate(b, 1 << 20, true));
        assertEquals(Errors.INVALID_RECORD, RecordBatchValidator.validate(b, 1 << 20, false));
    }

    @Test
    void malformedControlBatchesAreNamed() {
        ByteBuf b = Unpooled.buffer();
        ControlRecordLayout.write(b, ControlRecordLayout.ABORT, 7, (short) 0, 0, 0, TS);
        b.setShort(ControlRecordLayout.KEY_TYPE_OFFSET, 9);
        assertEquals("control type 9", ControlRecordLayout.invalidReason(b, 0, b.readableBytes()));
        assertTrue(ControlRecordLayout.invalidReason(b, 0, 60).startsWith("control batch of 60 bytes"));
        assertFalse(ControlRecordLayout.isControl(0));
        assertThrows(
                IllegalArgumentException.class,
                () -> ControlRecordLayout.write(Unpooled.buffer(), (short) 3, 7, (short) 0, 0, 0, TS));
        assertThrows(
                IllegalArgumentException.class,
                () -> ControlRecordLayout.write(Unpooled.buffer(), ControlRecordLayout.BEGIN, -1, (short) 0, 0, 0, TS));
    }
}
