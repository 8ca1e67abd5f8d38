package io.stellflow.server.common.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Properties;
import org.junit.jupiter.api.Test;

class ConfigValuesTest {
    private static Properties props(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    @Test
    void absentKeysGiveTheDefaultAndPresentOnesAreTrimmedAndRangeChecked() {
        Properties p = props("n", " 42 ", "b", " TRUE ", "s", "  x y  ");
        assertThat(ConfigValues.longValue(p, "n", 7, 0, 100)).isEqualTo(42);
        assertThat(ConfigValues.longValue(p, "missing", 7, 0, 100)).isEqualTo(7);
        assertThat(ConfigValues.intValue(p, "n", 7, 42, 42)).isEqualTo(42);
        assertThat(ConfigValues.requiredLong(p, "n", 0, 100)).isEqualTo(42);
        assertThat(ConfigValues.bool(p, "b", false)).isTrue();
        assertThat(ConfigValues.bool(p, "missing", true)).isTrue();
        assertThat(ConfigValues.string(p, "s", "d")).isEqualTo("x y");
        assertThat(ConfigValues.string(p, "missing", "d")).isEqualTo("d");
    }

    @Test
    void badValuesAreRefusedNamingKeyValueAndReason() {
        Properties p = props("n", "12x", "r", "101", "b", "yes", "s", "  ");
        assertThatThrownBy(() -> ConfigValues.longValue(p, "n", 0, 0, 100))
                .isInstanceOf(ConfigException.class)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Invalid value '12x' for configuration key 'n': not an integer");
        assertThatThrownBy(() -> ConfigValues.intValue(p, "r", 0, 0, 100))
                .hasMessage("Invalid value '101' for configuration key 'r': must be in 0..100");
        assertThatThrownBy(() -> ConfigValues.bool(p, "b", false))
                .hasMessage("Invalid value 'yes' for configuration key 'b': must be true or false");
        assertThatThrownBy(() -> ConfigValues.string(p, "s", "d"))
                .hasMessageContaining("'s'")
                .hasMessageContaining("must not be blank");
        assertThatThrownBy(() -> ConfigValues.requiredLong(p, "missing", 0, 1))
                .isInstanceOfSatisfying(
                        ConfigException.class, e -> assertThat(e.key()).isEqualTo("missing"))
                .hasMessageContaining("is required");
    }
}
