package io.stellflow.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LogConfigTest {
    @Test
    void defaultsMatchKafka() {
        LogConfig c = LogConfig.defaults();
        assertThat(c.segmentBytes()).isEqualTo(1 << 30);
        assertThat(c.indexIntervalBytes()).isEqualTo(4096);
        assertThat(c.indexMaxBytes()).isEqualTo(10 * 1024 * 1024);
        assertThat(c.flushMessages()).isEqualTo(Long.MAX_VALUE);
        assertThat(c.flushMs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void badValuesNameTheKey() {
        assertThatThrownBy(() -> new LogConfig(10, 0, 8, 1, 0)).hasMessageContaining("log.segment.bytes");
        assertThatThrownBy(() -> new LogConfig(1024, -1, 8, 1, 0)).hasMessageContaining("log.index.interval.bytes");
        assertThatThrownBy(() -> new LogConfig(1024, 0, 7, 1, 0)).hasMessageContaining("log.index.size.max.bytes");
        assertThatThrownBy(() -> new LogConfig(1024, 0, 8, 0, 0)).hasMessageContaining("log.flush.interval.messages");
        assertThatThrownBy(() -> new LogConfig(1024, 0, 8, 1, -1)).hasMessageContaining("log.flush.interval.ms");
    }
}
