package io.stellflow.perf;

import io.stellflow.perf.data.Payloads;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code stellflow-perf.sh payload-file}: writes the JSON log records of {@code produce --payload
 * json-logs} to a file, one per line, for Kafka's {@code ProducerPerformance --payload-file} (and
 * ours), so a lab run sends the same bytes to both systems. Prints the record count and total bytes.
 */
@Command(
        name = "payload-file",
        mixinStandardHelpOptions = true,
        description = "Write JSON log records, one per line, for --payload-file (ours and Kafka's).")
final class PayloadFileCommand implements Callable<Integer> {
    /**
     * Records of a payload by default: 10,000 of at most 1 KiB are about 8.5 MB. The values are sent
     * in turn (Kafka's tool picks them at random), so each comes back after the whole set; with
     * 1,000 (855 KB) a zstd producer found the earlier copies inside its 2 MiB window and a 1 MiB+
     * batch compressed 9x instead of the 5x that distinct lines give (perf/results/20261204T191836Z,
     * not committed). 8.5 MB exceeds our largest batch (8 MiB) and zstd level 3's window.
     */
    static final int DEFAULT_RECORDS = 10_000;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--out", required = true, description = "file to write (replaced)")
    Path out;

    @Option(
            names = "--records",
            defaultValue = "" + DEFAULT_RECORDS,
            description = "records (default ${DEFAULT-VALUE})")
    int records;

    @Option(
            names = "--record-size",
            defaultValue = "1024",
            description = "most bytes of a record (default ${DEFAULT-VALUE})")
    int recordSize;

    @Option(names = "--seed", defaultValue = "42", description = "JsonLogLines seed (default ${DEFAULT-VALUE})")
    long seed;

    @Override
    public Integer call() throws Exception {
        if (records < 1 || recordSize < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--records and --record-size must be >= 1");
        }
        byte[][] values = Payloads.jsonLogRecords(seed, records, recordSize);
        Payloads.writeFile(out, values);
        spec.commandLine()
                .getOut()
                .println("wrote " + values.length + " records, " + Payloads.totalBytes(values) + " bytes, to " + out);
        spec.commandLine().getOut().flush();
        return 0;
    }
}
