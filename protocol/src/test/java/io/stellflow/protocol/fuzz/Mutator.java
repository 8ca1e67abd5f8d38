package io.stellflow.protocol.fuzz;

import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Seeded byte-level mutations of valid inputs, for {@link ShortRun} (the CI run; coverage-guided
 * mutation is Jazzer's). Each mutant is a seed with one to four of: bit flips, a byte or a
 * big-endian int16/int32 set to a boundary value (0, ±1, the type's extremes, the bytes left, a
 * minimum batch length), inserted, erased, duplicated or appended bytes, a truncation, or a splice
 * with another seed. Boundary values in length and count fields are what strict decoders get wrong
 * most often.
 *
 * <p>Not thread-safe; deterministic for a given random seed and corpus.
 */
public final class Mutator {
    private static final int[] INTS = {
        0,
        1,
        -1,
        -2,
        2,
        25,
        29,
        78,
        127,
        128,
        255,
        0x7FFF,
        0x8000,
        0xFFFF,
        Integer.MAX_VALUE,
        Integer.MIN_VALUE,
        67_108_860
    };

    private final SplittableRandom random;
    private final List<byte[]> seeds;

    public Mutator(long randomSeed, List<byte[]> seeds) {
        if (seeds.isEmpty()) {
            throw new IllegalArgumentException("no seeds");
        }
        this.random = new SplittableRandom(randomSeed);
        this.seeds = List.copyOf(seeds);
    }

    /** The next mutant of a seed picked at random. */
    public byte[] next() {
        byte[] b = seeds.get(random.nextInt(seeds.size())).clone();
        int ops = 1 + random.nextInt(4);
        for (int i = 0; i < ops; i++) {
            b = mutate(b);
        }
        return b;
    }

    private byte[] mutate(byte[] b) {
        int op = random.nextInt(11);
        if (b.length == 0 && op < 7) {
            op = 7;
        }
        switch (op) {
            case 0, 1 -> b[random.nextInt(b.length)] ^= (byte) (1 << random.nextInt(8));
            case 2 -> b[random.nextInt(b.length)] = (byte) INTS[random.nextInt(INTS.length)];
            case 3 -> putInt(b, random.nextInt(b.length), boundary(b), 2);
            case 4, 5 -> putInt(b, random.nextInt(b.length), boundary(b), 4);
            case 6 -> b = erase(b);
            case 7 -> b = insert(b, randomBytes(1 + random.nextInt(8)));
            case 8 -> b = duplicate(b);
            case 9 -> b = Arrays.copyOf(b, random.nextInt(b.length + 1));
            default -> b = splice(b);
        }
        return b;
    }

    private int boundary(byte[] b) {
        int pick = random.nextInt(INTS.length + 3);
        if (pick < INTS.length) {
            return INTS[pick];
        }
        return b.length - random.nextInt(b.length + 1) + (pick - INTS.length) - 1; // a bytes-left count ±1
    }

    private static void putInt(byte[] b, int at, int value, int width) {
        for (int i = 0; i < width && at + i < b.length; i++) {
            b[at + i] = (byte) (value >>> (8 * (width - 1 - i)));
        }
    }

    private byte[] randomBytes(int n) {
        byte[] r = new byte[n];
        for (int i = 0; i < n; i++) {
            r[i] = (byte) random.nextInt(256);
        }
        return r;
    }

    private byte[] insert(byte[] b, byte[] extra) {
        int at = random.nextInt(b.length + 1);
        byte[] out = new byte[b.length + extra.length];
        System.arraycopy(b, 0, out, 0, at);
        System.arraycopy(extra, 0, out, at, extra.length);
        System.arraycopy(b, at, out, at + extra.length, b.length - at);
        return out;
    }

    private byte[] erase(byte[] b) {
        int from = random.nextInt(b.length);
        int n = 1 + random.nextInt(Math.min(16, b.length - from));
        byte[] out = new byte[b.length - n];
        System.arraycopy(b, 0, out, 0, from);
        System.arraycopy(b, from + n, out, from, b.length - from - n);
        return out;
    }

    private byte[] duplicate(byte[] b) {
        if (b.length == 0) {
            return b;
        }
        int from = random.nextInt(b.length);
        int n = 1 + random.nextInt(Math.min(256, b.length - from));
        return insert(b, Arrays.copyOfRange(b, from, from + n));
    }

    private byte[] splice(byte[] b) {
        byte[] other = seeds.get(random.nextInt(seeds.size()));
        int keep = random.nextInt(b.length + 1);
        int from = random.nextInt(other.length + 1);
        byte[] out = Arrays.copyOf(b, keep + other.length - from);
        System.arraycopy(other, from, out, keep, other.length - from);
        return out;
    }
}
