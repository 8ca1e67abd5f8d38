package io.stellflow.controller.server;

import io.stellflow.controller.ControllerMetrics;
import io.stellflow.controller.ControllerMetrics.CommandResult;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.MetadataRecord;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * How a control-plane request that asks for a metadata change becomes a command: committed through
 * the quorum within {@code controller.request.timeout.ms}, and counted once when answered
 * ({@code stellflow.controller.command.count} by result, {@code .latency} from its arrival to its
 * answer, nanoseconds read from an injected clock).
 *
 * <p>Commands are RegisterBroker, CreateTopics, DeleteTopics, CreatePartitions, AlterPartition,
 * IncrementalAlterConfigs, ElectLeaders, AllocateProducerIds and a heartbeat that fences or unfences, once they reached
 * the active controller. Result: success; error (bad input, stale epochs, lost leadership; a request
 * with several topics counts its worst); timeout. NOT_CONTROLLER redirects, plain heartbeats and
 * queries are not commands.
 *
 * <p>Thread-safety: stateless apart from its collaborators; callable from any thread.
 */
final class Commands {
    private final Quorum quorum;
    private final long requestTimeoutMs;
    private final ControllerMetrics metrics;
    private final LongSupplier nanoClock;

    /**
     * @param quorum where commands commit
     * @param requestTimeoutMs how long a commit may take ({@code controller.request.timeout.ms})
     * @param metrics where answered commands and committed elections are counted
     * @param nanoClock monotonic nanoseconds ({@code System::nanoTime} outside tests)
     */
    Commands(Quorum quorum, long requestTimeoutMs, ControllerMetrics metrics, LongSupplier nanoClock) {
        this.quorum = quorum;
        this.requestTimeoutMs = requestTimeoutMs;
        this.metrics = metrics;
        this.nanoClock = nanoClock;
    }

    /** A command's arrival time, nanoseconds of the injected clock, for {@link #answered}. */
    long startNs() {
        return nanoClock.getAsLong();
    }

    /** Commits {@code records} as one entry; see {@link Quorum#submit}. */
    RaftQuorum.Submitted commit(List<MetadataRecord> records) {
        return quorum.submit(records, requestTimeoutMs);
    }

    /**
     * Whether a command begun at {@code startNs} is still within half of {@code
     * controller.request.timeout.ms}: the budget for building a raced entry again, leaving the other
     * half for its last commit before the caller's deadline.
     */
    boolean withinRetryBudget(long startNs) {
        return nanoClock.getAsLong() - startNs < requestTimeoutMs * 500_000L;
    }

    /** Counts the leader elections of a committed entry ({@link Elections#committed}). */
    void elected(List<Elections.Change> changes) {
        Elections.committed(changes, metrics);
    }

    /** One answered command: its result and its latency since {@code startNs}. */
    void answered(CommandResult result, long startNs) {
        metrics.command(result, nanoClock.getAsLong() - startNs);
    }

    /** The {@code result} of an answer with {@code error}. */
    static CommandResult result(ErrorCode error) {
        return switch (error) {
            case NONE -> CommandResult.SUCCESS;
            case REQUEST_TIMED_OUT -> CommandResult.TIMEOUT;
            default -> CommandResult.ERROR;
        };
    }

    /** The worse of two results (timeout over error over success), for requests with several items. */
    static CommandResult worse(CommandResult a, ErrorCode error) {
        CommandResult b = result(error);
        return b.ordinal() > a.ordinal() ? b : a;
    }
}
