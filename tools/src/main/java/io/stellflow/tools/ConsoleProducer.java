package io.stellflow.tools;

import io.stellflow.client.ProducerRecord;
import io.stellflow.client.RecordMetadata;
import io.stellflow.client.StellflowException;
import io.stellflow.client.StellflowProducer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code stellflow-console-producer.sh}: sends one record per line of stdin. Stdin is read as raw
 * bytes and split at {@code '\n'} (the newline is not part of the value; a {@code '\r'} before it
 * is kept), so any text, in any encoding, round-trips byte for byte through the console consumer.
 * A last line without a trailing newline is sent as a record too. With {@code --property
 * parse.key=true} each line is split at the first key separator ({@code key.separator}, default
 * TAB) into key and value; a line without the separator is an error.
 *
 * <p>Exit status: 0 when every record was acknowledged, 1 when any send failed, 2 for bad
 * arguments. Not thread-safe (one invocation).
 */
@Command(
        name = "stellflow-console-producer",
        mixinStandardHelpOptions = true,
        description = "Send each line of standard input as one record.")
public final class ConsoleProducer implements Callable<Integer> {
    @Option(
            names = "--bootstrap-server",
            converter = AddressList.class,
            required = true,
            description = "host:port of a broker")
    String bootstrapServer;

    @Option(names = "--topic", required = true, description = "topic to write to")
    String topic;

    @Option(names = "--partition", description = "write every record to this partition (default: partitioner)")
    Integer partition;

    @Option(names = "--property", description = "reader property: parse.key=true, key.separator=<sep>")
    Map<String, String> readerProps = new HashMap<>();

    @Option(names = "--key-separator", description = "same as --property key.separator=<sep> (implies parse.key=true)")
    String keySeparator;

    @Option(names = "--producer-property", description = "producer property k=v (for example linger.ms=10)")
    Map<String, String> producerProps = new HashMap<>();

    @Option(
            names = "--acks",
            description = "acks: 0, 1 or -1/all (default -1, idempotent; 0 or 1 turn idempotence off)")
    String acks;

    @Option(names = "--batch-size", description = "batch.size in bytes")
    Integer batchSize;

    @Option(names = "--linger-ms", description = "linger.ms")
    Integer lingerMs;

    @Option(
            names = "--compression-codec",
            arity = "0..1",
            fallbackValue = "gzip",
            paramLabel = "<codec>",
            description = "compression.type: none, gzip, snappy, lz4 or zstd; gzip when given without a value"
                    + " (as Kafka's console producer)")
    String compressionCodec;

    /** The tools' {@code max.block.ms} unless given: long enough for a topic just created to show up. */
    static final long TOOL_MAX_BLOCK_MS = 5_000;

    @Spec
    CommandLine.Model.CommandSpec spec;

    InputStream in = System.in;

    Properties producerProperties() {
        Map<String, String> p = new HashMap<>(producerProps);
        if (acks != null) {
            p.put("acks", acks);
        }
        if (batchSize != null) {
            p.put("batch.size", batchSize.toString());
        }
        if (lingerMs != null) {
            p.put("linger.ms", lingerMs.toString());
        }
        if (compressionCodec != null) {
            p.put("compression.type", compressionCodec);
        }
        if (p.containsKey("transactional.id")) {
            // A transactional producer may send only inside beginTransaction/commitTransaction.
            throw new IllegalArgumentException("transactional.id=" + p.get("transactional.id")
                    + " is not supported by the console producer (it sends no transactions); remove the key");
        }
        p.putIfAbsent("client.id", "stellflow-console-producer");
        // A tool fails fast: a missing topic or an unreachable --bootstrap-server is reported after
        // 5 s instead of the library's 60 s (docs/operations.md, "When something is wrong").
        p.putIfAbsent("max.block.ms", Long.toString(TOOL_MAX_BLOCK_MS));
        return ClientProps.of(bootstrapServer, p);
    }

    /** The key separator bytes, or null when keys are not parsed. */
    byte[] separator() {
        String sep = keySeparator != null ? keySeparator : readerProps.get("key.separator");
        boolean parseKey = keySeparator != null || Boolean.parseBoolean(readerProps.getOrDefault("parse.key", "false"));
        if (!parseKey) {
            return null;
        }
        byte[] b = (sep == null ? "\t" : sep).getBytes(StandardCharsets.UTF_8);
        if (b.length == 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "key.separator must not be empty");
        }
        return b;
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        byte[] sep = separator();
        PrintWriter err = spec.commandLine().getErr();
        AtomicLong failed = new AtomicLong();
        AtomicReference<Throwable> firstError = new AtomicReference<>();
        long sent = 0;
        try (StellflowProducer producer = new StellflowProducer(producerProperties())) {
            LineSplitter splitter = new LineSplitter(in);
            byte[] line;
            while ((line = splitter.next()) != null) {
                byte[] key = null;
                byte[] value = line;
                if (sep != null) {
                    int at = indexOf(line, sep);
                    if (at < 0) {
                        err.println("error: no key separator on line " + (sent + 1));
                        err.flush();
                        producer.flush();
                        return 1;
                    }
                    key = Arrays.copyOfRange(line, 0, at);
                    value = Arrays.copyOfRange(line, at + sep.length, line.length);
                }
                CompletableFuture<RecordMetadata> f = producer.send(new ProducerRecord(topic, partition, key, value));
                f.whenComplete((md, e) -> {
                    if (e != null) {
                        failed.incrementAndGet();
                        firstError.compareAndSet(null, e);
                    }
                });
                sent++;
                if (f.isCompletedExceptionally()) {
                    // Failed before it was queued (no such topic or partition, no broker reachable within
                    // max.block.ms): every further line would wait as long again for the same answer.
                    break;
                }
            }
            producer.flush();
        }
        if (failed.get() > 0) {
            Throwable first = firstError.get();
            if (first instanceof CompletionException && first.getCause() != null) {
                first = first.getCause();
            }
            String why = first instanceof StellflowException ? first.getMessage() : String.valueOf(first);
            err.println("error: " + failed.get() + " of " + sent + " record(s) failed; first: " + why);
            err.flush();
            return 1;
        }
        return 0;
    }

    static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** Splits a byte stream at '\n' without decoding it. Not thread-safe. */
    static final class LineSplitter {
        private final InputStream in;
        private final byte[] buf = new byte[64 * 1024];
        private int pos;
        private int limit;
        private boolean eof;
        private final ByteArrayOutputStream partial = new ByteArrayOutputStream();

        LineSplitter(InputStream in) {
            this.in = in;
        }

        /** The next line without its '\n', or null at end of stream. */
        byte[] next() throws IOException {
            while (true) {
                for (int i = pos; i < limit; i++) {
                    if (buf[i] == '\n') {
                        byte[] line;
                        if (partial.size() == 0) {
                            line = Arrays.copyOfRange(buf, pos, i);
                        } else {
                            partial.write(buf, pos, i - pos);
                            line = partial.toByteArray();
                            partial.reset();
                        }
                        pos = i + 1;
                        return line;
                    }
                }
                partial.write(buf, pos, limit - pos);
                pos = limit = 0;
                if (eof) {
                    if (partial.size() == 0) {
                        return null;
                    }
                    byte[] last = partial.toByteArray();
                    partial.reset();
                    return last;
                }
                int n = in.read(buf);
                if (n < 0) {
                    eof = true;
                } else {
                    limit = n;
                }
            }
        }
    }

    public static void main(String[] args) {
        System.exit(Tools.commandLine(new ConsoleProducer()).execute(args));
    }
}
