package io.stellflow.controller;

/**
 * Hooks for the controller metrics of {@code docs/spec/metrics.md} ("Controller"). The controller
 * calls them where the event happens; the broker module's {@code ControllerTelemetry} implements
 * them on the OpenTelemetry SDK (it adds the {@code node.id} attribute). Counters are events,
 * gauges are reported by value on change, latencies are in nanoseconds (the implementation exports
 * milliseconds).
 *
 * <p>Who reports what: the active controller reports commands, appends, partition changes, heartbeat
 * timeouts and delta broadcasts (only it commits and serves FollowMetadata); every controller reports
 * its own role ({@link #active}, {@link #epoch}, {@link #electionWon}), its snapshot loads and the
 * broker counts of the image it applied. Summed over the quorum, the counters are cluster totals.
 *
 * <p>Thread-safety: implementations must accept calls from any thread (Ratis apply and notification
 * threads, gRPC threads, the liveness checker) and must not block, lock or allocate per call.
 */
public interface ControllerMetrics {
    /** No-op implementation. */
    ControllerMetrics NOOP = new ControllerMetrics() {};

    /** The {@code result} attribute of a command: how its answer ended. */
    enum CommandResult {
        /** Answered without error. */
        SUCCESS("success"),
        /** Refused (bad input, stale epoch, ...) or failed to commit (leadership lost). */
        ERROR("error"),
        /** The entry did not commit within {@code controller.request.timeout.ms}. */
        TIMEOUT("timeout");

        private final String label;

        CommandResult(String label) {
            this.label = label;
        }

        /** The attribute value ({@code success}, {@code error}, {@code timeout}). */
        public String label() {
            return label;
        }
    }

    /**
     * {@code stellflow.controller.active}: true from the moment this node is the ready Raft leader
     * (it committed an entry of its term) until it loses leadership or stops.
     */
    default void active(boolean active) {}

    /** {@code stellflow.controller.election.count}: this node won an election (it is the new leader). */
    default void electionWon() {}

    /** {@code stellflow.controller.epoch}: the Raft term this node is in. */
    default void epoch(long term) {}

    /**
     * {@code stellflow.controller.command.count} and {@code .command.latency}: one control-plane
     * request that asks for a metadata change (RegisterBroker, CreateTopics, DeleteTopics,
     * CreatePartitions, AlterPartition, IncrementalAlterConfigs, ElectLeaders, a heartbeat that fences
     * or unfences)
     * answered by the active controller.
     *
     * @param result how the answer ended
     * @param latencyNs request arrival to answer
     */
    default void command(CommandResult result, long latencyNs) {}

    /**
     * {@code stellflow.metadata.log.append.latency}: one metadata log entry from submission to the
     * Raft log until it committed and was applied (entries that did not commit are not recorded).
     */
    default void logAppend(long latencyNs) {}

    /** {@code stellflow.metadata.log.replay.latency}: loading (verifying and decoding) a metadata snapshot at start or install. */
    default void replay(long latencyNs) {}

    /** {@code stellflow.metadata.delta.broadcast.count}: one delta (or full image) sent to one FollowMetadata stream. */
    default void deltaBroadcast() {}

    /**
     * {@code stellflow.broker.registered.count} and {@code stellflow.broker.fenced.count}, from the
     * image this node applied.
     *
     * @param registered registered brokers, fenced ones included
     * @param fenced fenced brokers
     */
    default void brokers(int registered, int fenced) {}

    /** {@code stellflow.broker.heartbeat.timeout.count}: an unfenced broker's session expired. */
    default void heartbeatTimeout() {}

    /**
     * {@code stellflow.partition.assignment.change.count}: committed changes of existing partitions'
     * leader or ISR (one per partition change record; new partitions are not changes).
     */
    default void partitionChanges(int count) {}

    /**
     * {@code stellflow.unclean.election.count}: one committed unclean leader election (a partition
     * whose new leader was outside the ISR: {@code unclean.leader.election.enable} or ElectLeaders
     * UNCLEAN), reported by the active controller.
     */
    default void uncleanElection() {}
}
