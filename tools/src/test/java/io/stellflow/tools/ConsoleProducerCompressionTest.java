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
    /** The producer properties of the tool run with {@code --bootstrap-server}, {@code --topic} and {@code args}. */
    private static String compressionType(String... args) {
        ConsoleProducer tool = new ConsoleProducer();
        String[] all = new String[args.length + 4];
        all[0] = "--bootstrap-server";
        all[1] = "127.0.0.1:9092";
        all[2] = "--topic";
        all[3] = "t";
        System.arraycopy(args, 0, all, 4, args.length);
        Tools.commandLine(tool).parseArgs(all);
        Properties props = tool.producerProperties();
        return props.getProperty("compression.type");
    }

    @Test
    void theCodecGivenBecomesCompressionType() {
        assertThat(compressionType("--compression-codec", "zstd")).isEqualTo("zstd");
    }

    @Test
    void withoutAValueItIsGzip() {
        assertThat(compressionType("--compression-codec")).isEqualTo("gzip");
        assertThat(compressionType("--compression-codec", "--linger-ms", "5")).isEqualTo("gzip");
    }

    @Test
    void absentLeavesTheProducerDefaultOrTheProperty() {
        assertThat(compressionType()).isNull();
        assertThat(compressionType("--producer-property", "compression.type=lz4"))
                .isEqualTo("lz4");
        assertThat(compressionType("--producer-property", "compression.type=lz4", "--compression-codec", "snappy"))
                .isEqualTo("snappy");
    }
}
