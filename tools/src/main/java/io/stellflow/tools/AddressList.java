package io.stellflow.tools;

import io.stellflow.client.HostPort;
import picocli.CommandLine;

/**
 * The picocli converter of the address options ({@code --bootstrap-server}, {@code
 * --bootstrap-controller}): a comma-separated list of {@code host:port} (IPv6 literals as {@code
 * [::1]:9092}, ports 1..65535, {@link HostPort#parse}), blank entries skipped as the clients skip
 * them. A malformed entry is a usage error at parse time (exit status 2, {@code error: Invalid value
 * for option '--bootstrap-server': expected host:port, got 'x'}), before the tool connects to
 * anything; the value itself is kept as given.
 *
 * <p>Thread-safety: stateless.
 */
final class AddressList implements CommandLine.ITypeConverter<String> {
    @Override
    public String convert(String value) {
        int entries = 0;
        for (String entry : value.split(",")) {
            if (entry.isBlank()) {
                continue;
            }
            try {
                HostPort.parse(entry.trim());
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
            entries++;
        }
        if (entries == 0) {
            throw new CommandLine.TypeConversionException("no host:port given");
        }
        return value;
    }
}
