package io.stellflow.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The Stellflow release this client was built as: the Maven project version, written into the
 * resource {@code stellflow-version.properties} at build time (resource filtering in the client's
 * pom), so it is right from the jar and from {@code target/classes} alike. The tools print it for
 * {@code --version}.
 *
 * <p>Thread-safety: immutable after class initialisation.
 */
public final class StellflowVersion {
    private static final String VERSION = load();

    private StellflowVersion() {}

    /** The version, for example {@code 0.1.0-SNAPSHOT}; {@code unknown} if the resource is missing. */
    public static String version() {
        return VERSION;
    }

    private static String load() {
        try (InputStream in = StellflowVersion.class.getResourceAsStream("stellflow-version.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("version", "unknown").trim();
            // An unfiltered copy (an IDE build that skipped Maven's resource filtering) still says so.
            return v.isEmpty() || v.startsWith("${") ? "unknown" : v;
        } catch (IOException e) {
            throw new UncheckedIOException("reading stellflow-version.properties", e);
        }
    }
}
