package io.stellflow.protocol.support;

import java.io.ByteArrayOutputStream;

/** Test edits of zstd frames (RFC 8878 §3.1.1): what a hostile producer could send instead. */
public final class ZstdFrames {
    private ZstdFrames() {}

    /**
     * {@code content} as a frame of raw blocks (at most 128 KiB each) that asks for a window of
     * {@code 2^windowLog} bytes (10 to 41; not single segment) and, when {@code declareSize},
     * declares its size in 4 bytes: the blocks make the frame as long as the content, so it spans as
     * many input steps as wanted.
     */
    public static byte[] rawBlocks(byte[] content, int windowLog, boolean declareSize) {
        ByteArrayOutputStream f = new ByteArrayOutputStream();
        f.writeBytes(new byte[] {0x28, (byte) 0xb5, 0x2f, (byte) 0xfd});
        f.write(declareSize ? 0x80 : 0x00); // FCS flag 2 (4 bytes) or 0, not single segment, no checksum
        f.write((windowLog - 10) << 3); // window 2^windowLog, no mantissa
        if (declareSize) {
            for (int i = 0; i < 4; i++) {
                f.write(content.length >>> (8 * i));
            }
        }
        int at = 0;
        do {
            int n = Math.min(128 << 10, content.length - at);
            int header = (n << 3) | (at + n == content.length ? 1 : 0); // raw block, last flag
            f.writeBytes(new byte[] {(byte) header, (byte) (header >>> 8), (byte) (header >>> 16)});
            f.write(content, at, n);
            at += n;
        } while (at < content.length);
        return f.toByteArray();
    }

    /**
     * {@code frame} with its header's content size set to {@code size}: our encoder's frames, whose
     * Frame_Header_Descriptor (byte 4) says a 4-byte Frame_Content_Size after the optional window
     * descriptor and dictionary id.
     *
     * @throws IllegalArgumentException when the frame's content size field is not 4 bytes
     */
    public static byte[] withDeclaredSize(byte[] frame, long size) {
        int descriptor = frame[4] & 0xFF;
        if (descriptor >>> 6 != 2) {
            throw new IllegalArgumentException("not a 4-byte content size: descriptor " + descriptor);
        }
        int at = 5 + ((descriptor & 0x20) != 0 ? 0 : 1) + new int[] {0, 1, 2, 4}[descriptor & 3];
        byte[] out = frame.clone();
        for (int i = 0; i < 4; i++) {
            out[at + i] = (byte) (size >>> (8 * i));
        }
        return out;
    }
}
