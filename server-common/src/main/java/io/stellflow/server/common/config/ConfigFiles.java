package io.stellflow.server.common.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.function.Function;
import org.slf4j.Logger;

/**
 * The properties file a server main is given: read (UTF-8) and parsed, or the JVM exits with the
 * reason. Shared by the broker's and the controller's entry points, so both refuse a bad file the
 * same way.
 *
 * <p>Thread-safety: stateless.
 */
public final class ConfigFiles {
    private ConfigFiles() {}

    /** Reads a properties file (UTF-8). */
    public static Properties load(Path file) throws IOException {
        Properties props = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            props.load(new InputStreamReader(in, StandardCharsets.UTF_8));
        }
        return props;
    }

    /**
     * The configuration named by a server main's only argument, a properties file. Exits the JVM with
     * status 2 after a usage line, or a {@code <event>_CONFIG_INVALID} line naming the bad key, when the
     * argument is missing or the file unreadable or invalid. First registers the removal of the
     * launcher's pid file at exit ({@link PidFile#removeAtExit()}).
     *
     * @param usage the usage line's command and argument
     * @param event prefix of the error event ({@code BROKER}, {@code CONTROLLER})
     * @param log where the error event is logged (the entry point's logger)
     * @param parse reads and validates the properties; throws {@link ConfigException} for a bad key
     */
    public static <T> T parseOrExit(
            String[] args, String usage, String event, Logger log, Function<Properties, T> parse) {
        PidFile.removeAtExit(); // before any exit below: a failed start leaves no pid file
        if (args.length != 1) {
            System.err.println("usage: " + usage);
            System.exit(2);
        }
        try {
            return parse.apply(load(Path.of(args[0])));
        } catch (ConfigException e) {
            log.error("{}_CONFIG_INVALID {}", event, e.getMessage());
        } catch (IOException e) {
            log.error("{}_CONFIG_INVALID cannot read {}: {}", event, args[0], e.toString());
        }
        System.exit(2);
        throw new IllegalStateException("unreachable: System.exit returned");
    }
}
