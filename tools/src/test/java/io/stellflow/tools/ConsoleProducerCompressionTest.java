package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * {@code --compression-codec} as in Kafka's console producer: the codec given, gzip when the option
 * has no value, nothing when absent (the producer's default), and it wins over a {@code
 * --producer-property compression.type} as the other shortcut options do.
 */
class ConsoleProducerCompressionTest {
    private static Properties props(String... args) {
        ConsoleProducer tool = new ConsoleProducer();
        Tools.commandLine(tool).parseArgs(args);
        return tool.producerProperties();
    }

    @Test
    void theCodecGivenBecomesCompressionType() {
        assertThat(props("--bootstrap-server", "127.0.0.1:9092", "--topic", "t", "--compression-codec", "zstd")
                        .getProperty("compression.type"))
                .isEqualTo("zstd");
    }

    @Test
    void withoutAValueItIsGzip() {
        assertThat(props("--bootstrap-server", "127.0.0.1:9092", "--topic", "t", "--compression-codec")
                        .getProperty("compression.type"))
                .isEqualTo("gzip");
        assertThat(props("--bootstrap-server", "127.0.0.1:9092", "--compression-codec", "--topic", "t")
                        .getProperty("compression.type"))
                .isEqualTo("gzip");
    }

    @Test
    void absentLeavesTheProducerDefaultOrTheProperty() {
        assertThat(props("--bootstrap-server", "127.0.0.1:9092", "--topic", "t").getProperty("compression.type"))
                .isNull();
        assertThat(props(
                                "--bootstrap-server",
                                "127.0.0.1:9092",
                                "--topic",
                                "t",
                                "--producer-property",
                                "compression.type=lz4")
                        .getProperty("compression.type"))
                .isEqualTo("lz4");
        assertThat(props(
                                "--bootstrap-server",
                                "127.0.0.1:9092",
                                "--topic",
                                "t",
                                "--producer-property",
                                "compression.type=lz4",
                                "--compression-codec",
                                "snappy")
                        .getProperty("compression.type"))
                .isEqualTo("snappy");
    }
}
