package io.stellflow.protocol.support;

/** Test edits of zstd frames (RFC 8878 §3.1.1): what a hostile producer could send instead. */
public final class ZstdFrames {
    private ZstdFrames() {}

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
