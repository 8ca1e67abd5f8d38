package io.stellflow.protocol.record;

import java.nio.ByteBuffer;

/**
 * Allocation-free strict UTF-8 check (RFC 3629): rejects overlong forms, surrogates (U+D800..DFFF),
 * code points above U+10FFFF and truncated sequences; the same inputs a REPORT-mode CharsetDecoder
 * rejects. Thread-safety: stateless.
 */
final class Utf8 {
    private Utf8() {}

    /**
     * True if the {@code length} bytes at absolute {@code index} (within the limit) are valid UTF-8;
     * the position is unused.
     */
    static boolean isValid(ByteBuffer buf, int index, int length) {
        int i = index;
        int end = index + length;
        while (i < end) {
            int b0 = buf.get(i) & 0xFF;
            if (b0 < 0x80) {
                i++;
                continue;
            }
            int need;
            int min;
            int max = 0xBF;
            if (b0 >= 0xC2 && b0 <= 0xDF) {
                need = 1;
                min = 0x80;
            } else if (b0 >= 0xE0 && b0 <= 0xEF) {
                need = 2;
                min = b0 == 0xE0 ? 0xA0 : 0x80;
                max = b0 == 0xED ? 0x9F : 0xBF;
            } else if (b0 >= 0xF0 && b0 <= 0xF4) {
                need = 3;
                min = b0 == 0xF0 ? 0x90 : 0x80;
                max = b0 == 0xF4 ? 0x8F : 0xBF;
            } else {
                return false;
            }
            if (end - i - 1 < need) {
                return false;
            }
            int b1 = buf.get(i + 1) & 0xFF;
            if (b1 < min || b1 > max) {
                return false;
            }
            for (int k = 2; k <= need; k++) {
                int bk = buf.get(i + k) & 0xFF;
                if (bk < 0x80 || bk > 0xBF) {
                    return false;
                }
            }
            i += need + 1;
        }
        return true;
    }
}
