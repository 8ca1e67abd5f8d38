package io.stellflow.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty's PARANOID leak detector reported a buffer that was never released.
 * Registered for every test class through {@code META-INF/services} (auto-detection is on in
 * {@code junit-platform.properties}). Leaks are reported only after the buffer is garbage collected
 * and the detector runs again, so this forces a few GCs and allocations first.
 */
public final class LeakCheck implements AfterAllCallback {
    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        for (int round = 0; round < 3; round++) {
            System.gc();
            Thread.sleep(50);
            for (int i = 0; i < 200; i++) {
                ByteBuf probe = PooledByteBufAllocator.DEFAULT.directBuffer(16);
                probe.release();
            }
        }
        List<String> leaks = List.copyOf(LeakRecorder.LEAKS);
        LeakRecorder.LEAKS.clear();
        assertThat(leaks).as("Netty LEAK reports").isEmpty();
    }
}
