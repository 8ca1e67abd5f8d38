package io.stellflow.broker.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** config/server.properties documents every key, and its defaults (uncommented) form a valid config. */
class ServerPropertiesFileTest {
    private static final Path FILE = Path.of("..", "config", "server.properties");

    @Test
    void documentsEveryKeyWithAValidDefault() throws Exception {
        List<String> lines = Files.readAllLines(FILE);
        Properties uncommented = new Properties();
        Set<String> documented = new HashSet<>();
        for (String line : lines) {
            String l = line.startsWith("#") ? line.substring(1) : line;
            int eq = l.indexOf('=');
            if (eq <= 0 || l.contains(" ")) {
                continue;
            }
            String key = l.substring(0, eq);
            String value = l.substring(eq + 1);
            documented.add(key);
            if (!value.isEmpty()) {
                uncommented.setProperty(key, value);
            }
        }
        Set<String> expected = new HashSet<>(BrokerConfig.knownKeys());
        expected.remove("log.dir"); // accepted as a fallback, not advertised
        assertThat(documented).containsExactlyInAnyOrderElementsOf(expected);
        BrokerConfig config = BrokerConfig.fromProperties(uncommented);
        assertThat(config.unknownKeys()).isEmpty();
        BrokerConfig defaults = BrokerConfig.fromProperties(new Properties());
        assertThat(config.logConfig()).isEqualTo(defaults.logConfig());
        assertThat(config.messageMaxBytes()).isEqualTo(defaults.messageMaxBytes());
        assertThat(config.listener()).isEqualTo(defaults.listener());
        assertThat(config.logDirs()).isEqualTo(defaults.logDirs());
    }
}
