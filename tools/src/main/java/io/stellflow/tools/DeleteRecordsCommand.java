package io.stellflow.tools;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stellflow.client.DeletedRecords;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowException;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code stellflow-delete-records.sh}: deletes the records of partitions below given offsets (Kafka's
 * {@code kafka-delete-records}): each partition's leader raises its log start offset (DeleteRecords,
 * apiKey 27) and answers the new one, printed as {@code partition: t-0  low_watermark: 5}.
 *
 * <p>{@code --offset-json-file} holds Kafka's document, {@code {"partitions": [{"topic": "t",
 * "partition": 0, "offset": 5}], "version": 1}}; offset -1 means the high watermark (everything a
 * consumer can read). The file is checked whole before anything is sent: a missing or unreadable
 * file, bad JSON, a missing field, a version other than 1, a negative partition, an offset below -1
 * or a partition named twice ends the run with one {@code error:} line and exit status 1, having
 * deleted nothing. A partition the cluster refuses (an offset above its high watermark:
 * OFFSET_OUT_OF_RANGE; an unknown topic or partition; no leader) prints {@code error:} in its line and
 * the run ends with status 1 after the others were done. Not thread-safe (one invocation).
 */
@Command(
        name = "stellflow-delete-records",
        mixinStandardHelpOptions = true,
        description = "Delete the records of partitions below the offsets given in a JSON file.")
public final class DeleteRecordsCommand implements Callable<Integer> {
    @Option(
            names = "--bootstrap-server",
            converter = AddressList.class,
            required = true,
            description = "host:port of a broker")
    String bootstrapServer;

    @Option(
            names = "--offset-json-file",
            required = true,
            description = "JSON file: {\"partitions\":[{\"topic\":\"t\",\"partition\":0,\"offset\":5}],\"version\":1}"
                    + " (offset -1: the high watermark)")
    Path offsetJsonFile;

    @Option(names = "--command-property", description = "extra client property k=v")
    Map<String, String> props;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        Map<TopicPartition, Long> offsets = parse(offsetJsonFile);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        int failed = 0;
        try (StellflowAdmin admin = new StellflowAdmin(ClientProps.of(bootstrapServer, props))) {
            out.println("Executing records delete operation");
            Map<TopicPartition, DeletedRecords> result = admin.deleteRecords(offsets);
            out.println("Records delete operation completed:");
            for (Map.Entry<TopicPartition, DeletedRecords> e : result.entrySet()) {
                TopicPartition tp = e.getKey();
                DeletedRecords r = e.getValue();
                String name = tp.topic() + "-" + tp.partition();
                if (r.ok()) {
                    out.println("partition: " + name + "\tlow_watermark: " + r.lowWatermark());
                } else {
                    failed++;
                    out.println("partition: " + name + "\terror: " + describe(r.errorCode(), offsets.get(tp)));
                }
            }
            out.flush();
        }
        if (failed > 0) {
            err.println("error: " + failed + " of " + offsets.size() + " partition(s) were not deleted (see above)");
            err.flush();
            return 1;
        }
        return 0;
    }

    private static String describe(short code, long offset) {
        String why = switch (code) {
            case Errors.OFFSET_OUT_OF_RANGE -> "offset " + offset + " is above the partition's high watermark";
            case Errors.UNKNOWN_TOPIC_OR_PARTITION -> "no such topic or partition";
            case Errors.NOT_LEADER_OR_FOLLOWER, Errors.LEADER_NOT_AVAILABLE -> "no leader answered (retry later)";
            default -> "refused";
        };
        return (code == StellflowException.NETWORK_ERROR ? "NETWORK_ERROR" : Errors.name(code)) + " (" + why + ")";
    }

    /**
     * The offsets of {@code file} in file order, checked whole.
     *
     * @throws IllegalArgumentException naming the file and what is wrong in it
     */
    /**
     * Jackson's reason without its source notes: the first line, cut before a {@code [Source: ...]}
     * (and the {@code (start marker at} that leads to it).
     */
    static String shortReason(String jacksonMessage) {
        String reason =
                jacksonMessage == null ? "" : jacksonMessage.lines().findFirst().orElse("");
        int source = reason.indexOf("[Source");
        if (source >= 0) {
            reason = reason.substring(0, source).replaceAll("\\s*\\(?\\s*(start marker )?at\\s*$", "");
        }
        return reason.strip();
    }

    static Map<TopicPartition, Long> parse(Path file) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(Files.readString(file));
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("--offset-json-file " + file + " does not exist");
        } catch (JacksonException e) {
            throw new IllegalArgumentException("--offset-json-file " + file + ": invalid JSON at line "
                    + e.getLocation().getLineNr() + " column " + e.getLocation().getColumnNr() + ": "
                    + shortReason(e.getOriginalMessage()));
        } catch (IOException e) {
            throw new IllegalArgumentException("--offset-json-file " + file + " cannot be read: " + e.getMessage());
        }
        String where = "--offset-json-file " + file + ": ";
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException(where + "want an object {\"partitions\": [...], \"version\": 1}");
        }
        JsonNode version = root.get("version");
        if (version != null && !(version.isIntegralNumber() && version.asInt() == 1)) {
            throw new IllegalArgumentException(where + "unsupported version " + version + " (want 1)");
        }
        JsonNode partitions = root.get("partitions");
        if (partitions == null || !partitions.isArray()) {
            throw new IllegalArgumentException(where + "\"partitions\" must be an array");
        }
        if (partitions.isEmpty()) {
            throw new IllegalArgumentException(where + "\"partitions\" is empty: nothing to delete");
        }
        Map<TopicPartition, Long> out = new LinkedHashMap<>();
        int i = 0;
        for (JsonNode p : partitions) {
            String at = where + "partitions[" + i++ + "]: ";
            JsonNode topic = p.get("topic");
            JsonNode partition = p.get("partition");
            JsonNode offset = p.get("offset");
            if (topic == null || !topic.isTextual() || topic.asText().isEmpty()) {
                throw new IllegalArgumentException(at + "\"topic\" must be a non-empty string");
            }
            if (partition == null
                    || !partition.canConvertToInt()
                    || !partition.isIntegralNumber()
                    || partition.asInt() < 0) {
                throw new IllegalArgumentException(at + "\"partition\" must be an integer >= 0");
            }
            if (offset == null || !offset.isIntegralNumber() || !offset.canConvertToLong() || offset.asLong() < -1) {
                throw new IllegalArgumentException(at + "\"offset\" must be an integer >= -1 (-1: the high watermark)");
            }
            TopicPartition tp = new TopicPartition(topic.asText(), partition.asInt());
            if (out.put(tp, offset.asLong()) != null) {
                throw new IllegalArgumentException(
                        at + "partition " + tp.topic() + "-" + tp.partition() + " is named twice");
            }
        }
        return out;
    }

    public static void main(String[] args) {
        System.exit(OneLineUsageErrors.commandLine(new DeleteRecordsCommand()).execute(args));
    }
}
