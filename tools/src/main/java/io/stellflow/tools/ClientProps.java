package io.stellflow.tools;

import java.util.Map;
import java.util.Properties;

/** Builds client {@link Properties} from a bootstrap address plus {@code k=v} overrides. */
final class ClientProps {
    private ClientProps() {}

    static Properties of(String bootstrap, Map<String, String> overrides) {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", bootstrap);
        if (overrides != null) {
            overrides.forEach(p::setProperty);
        }
        return p;
    }
}
