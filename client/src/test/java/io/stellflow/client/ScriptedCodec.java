package io.stellflow.client;

import io.netty.buffer.ByteBuf;
import io.stellflow.protocol.compression.CompressionCodec;
import io.stellflow.protocol.compression.CompressionCodecs;
import io.stellflow.protocol.compression.CompressionType;
import io.stellflow.protocol.compression.Decompressor;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A real codec with a script for the producer's compression tests: the n-th {@code compress} call
 * overall (counted over every codec of one {@link Script}, from 1) may wait at a gate or throw.
 *
 * <p>Thread-safety: the script is thread-safe; each codec is used by one thread at a time (the
 * producer's pool guarantees it).
 */
final class ScriptedCodec implements CompressionCodec {
    /** What the codecs of one producer do, shared by all of them. */
    static final class Script {
        final CompressionType type;
        /** compress calls started, over all codecs. */
        final AtomicInteger calls = new AtomicInteger();
        /** Codecs made (the pool's misses). */
        final AtomicInteger made = new AtomicInteger();
        /** Codecs closed. */
        final AtomicInteger closed = new AtomicInteger();
        /** Every call sleeps this long before compressing (a slow codec: zstd on a large batch). */
        volatile long delayMs;
        /** Counted down when a gated call is waiting at the gate. */
        final CountDownLatch atGate = new CountDownLatch(1);

        private final CountDownLatch gate = new CountDownLatch(1);
        /** Calls firstGatedCall..lastGatedCall wait at the gate until {@link #open}. */
        private final int firstGatedCall;

        private final int lastGatedCall;
        /** Calls firstFailedCall..lastFailedCall throw. */
        private final int firstFailedCall;

        private final int lastFailedCall;

        Script(CompressionType type, int gatedCalls, int failedCalls) {
            this(type, 1, gatedCalls, failedCalls);
        }

        /** Calls {@code firstGatedCall..lastGatedCall} wait at the gate; calls 1..failedCalls throw. */
        Script(CompressionType type, int firstGatedCall, int lastGatedCall, int failedCalls) {
            this(type, firstGatedCall, lastGatedCall, 1, failedCalls);
        }

        /**
         * Calls {@code firstGatedCall..lastGatedCall} wait at the gate; calls {@code
         * firstFailedCall..lastFailedCall} throw.
         */
        Script(CompressionType type, int firstGatedCall, int lastGatedCall, int firstFailedCall, int lastFailedCall) {
            this.type = type;
            this.firstGatedCall = firstGatedCall;
            this.lastGatedCall = lastGatedCall;
            this.firstFailedCall = firstFailedCall;
            this.lastFailedCall = lastFailedCall;
        }

        void open() {
            gate.countDown();
        }

        Supplier<CompressionCodec> codecs() {
            return () -> {
                made.incrementAndGet();
                return new ScriptedCodec(this, CompressionCodecs.codec(type));
            };
        }
    }

    private final Script script;
    private final CompressionCodec real;

    private ScriptedCodec(Script script, CompressionCodec real) {
        this.script = script;
        this.real = real;
    }

    @Override
    public CompressionType type() {
        return real.type();
    }

    @Override
    public int compress(ByteBuf src, ByteBuf dst) {
        int call = script.calls.incrementAndGet();
        if (call >= script.firstGatedCall && call <= script.lastGatedCall) {
            script.atGate.countDown();
            try {
                if (!script.gate.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("test gate never opened");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        if (script.delayMs > 0) {
            try {
                Thread.sleep(script.delayMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        if (call >= script.firstFailedCall && call <= script.lastFailedCall) {
            // Half-written output, as a native failure could leave it: the caller must drop it.
            dst.writeBytes(new byte[] {1, 2, 3});
            throw new IllegalStateException("scripted codec failure of call " + call);
        }
        return real.compress(src, dst);
    }

    @Override
    public Decompressor newDecompressor() {
        return real.newDecompressor();
    }

    @Override
    public void close() {
        script.closed.incrementAndGet();
        real.close();
    }
}
