package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeLogDirsRequest;
import io.stellflow.protocol.message.DescribeLogDirsResponse;
import io.stellflow.protocol.message.DescribeLogDirsResponse.LogDir;
import io.stellflow.protocol.message.DescribeLogDirsResponse.PartitionSize;
import io.stellflow.storage.LogManager;
import io.stellflow.storage.UnifiedLog;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * DescribeLogDirs (apiKey 26, {@code docs/protocol-additions.md}): this broker's log dirs in {@code
 * log.dirs} order, each with its file system's total and usable bytes and the partitions it holds
 * (leaders and followers alike), with their segment bytes and log end offsets, sorted by topic and
 * partition. An offline dir answers {@code BROKER_NOT_AVAILABLE} with no partitions; a dir whose file
 * system cannot be read reports -1 for its sizes.
 *
 * <p>Thread-safety: stateless; reads a snapshot of the log manager's logs on the request thread.
 */
public final class DescribeLogDirsHandler implements ApiHandler {
    private final LogManager logs;
    private final Predicate<Path> offline;

    /**
     * @param logs the broker's logs
     * @param offline true for a log dir taken offline after an I/O failure
     */
    public DescribeLogDirsHandler(LogManager logs, Predicate<Path> offline) {
        this.logs = logs;
        this.offline = offline;
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        DescribeLogDirsRequest request = DescribeLogDirsRequest.read(body);
        Set<String> topics = request.topics() == null ? null : new HashSet<>(request.topics());
        Map<String, UnifiedLog> all = logs.logs();
        List<LogDir> dirs = new ArrayList<>();
        for (Path dir : logs.config().logDirs()) {
            if (offline.test(dir)) {
                dirs.add(new LogDir(dir.toString(), Errors.BROKER_NOT_AVAILABLE, -1, -1, List.of()));
                continue;
            }
            List<PartitionSize> partitions = new ArrayList<>();
            for (Map.Entry<String, UnifiedLog> e : all.entrySet()) {
                String name = e.getKey();
                int dash = name.lastIndexOf('-');
                String topic = name.substring(0, dash);
                int partition = Integer.parseInt(name.substring(dash + 1));
                if ((topics == null || topics.contains(topic)) && dir.equals(logs.logDirOf(topic, partition))) {
                    UnifiedLog log = e.getValue();
                    partitions.add(new PartitionSize(topic, partition, log.sizeInBytes(), log.logEndOffset()));
                }
            }
            partitions.sort(Comparator.comparing(PartitionSize::topic).thenComparingInt(PartitionSize::partition));
            long total = -1;
            long usable = -1;
            try {
                FileStore store = Files.getFileStore(dir);
                total = store.getTotalSpace();
                usable = store.getUsableSpace();
            } catch (IOException e) {
                // reported as -1: the partitions are still listed from the broker's own state
            }
            dirs.add(new LogDir(dir.toString(), Errors.NONE, total, usable, partitions));
        }
        context.respond(new DescribeLogDirsResponse(dirs));
    }
}
