package io.stellflow.broker.telemetry;

/**
 * The stable lifecycle event names of {@code docs/spec/metrics.md} ("Log event names"). Each is the
 * first word of its INFO (or WARN) line, followed by {@code key=value} pairs, so log pipelines can
 * match on it. The controller module (which cannot see this class) writes the controller events
 * with the same names; events of subsystems that do not exist yet (replication) are defined here
 * for their owners.
 *
 * <p>Thread-safety: constants only.
 */
public final class LogEvents {
    private LogEvents() {}

    /** The broker accepts connections (once per start). */
    public static final String BROKER_STARTED = "BROKER_STARTED";
    /** The broker begins an orderly shutdown (once per stop). */
    public static final String BROKER_STOPPING = "BROKER_STOPPING";

    /** A controller voter learned of a new Raft leader (once per leader change on each voter). */
    public static final String CONTROLLER_ELECTED = "CONTROLLER_ELECTED";
    /** The active controller committed a broker's (re-)registration (once per new incarnation). */
    public static final String BROKER_REGISTERED = "BROKER_REGISTERED";
    /** The active controller committed a broker's fencing: session timeout or clean shutdown. */
    public static final String BROKER_FENCED = "BROKER_FENCED";

    /**
     * A hosted partition got a new leader or leader epoch in the applied metadata (once per change on
     * each replica: partition, role, leader, leader epoch, partition epoch, ISR, HW, log end offset).
     */
    public static final String PARTITION_LEADER_CHANGED = "PARTITION_LEADER_CHANGED";

    public static final String PARTITION_REASSIGNED = "PARTITION_REASSIGNED";
    /**
     * The committed metadata removed followers from the ISR of a partition this broker leads (once
     * per change, on the leader: old and new ISR, leader epoch, partition epoch, HW).
     */
    public static final String ISR_SHRUNK = "ISR_SHRUNK";
    /** The committed metadata added followers back to the ISR of a partition this broker leads (as above). */
    public static final String ISR_EXPANDED = "ISR_EXPANDED";
    /**
     * A log was opened after an unclean shutdown and recovered (once per recovered partition, with
     * the bytes and segments dropped; {@link StorageMetrics#logRecovered}).
     */
    public static final String LOG_RECOVERED = "LOG_RECOVERED";
    /**
     * Opening a log found corruption and moved the unreadable part (a segment's tail and every later
     * segment) to a quarantine directory beside the partition, ERROR (once per such open; {@link
     * StorageMetrics#logQuarantined}).
     */
    public static final String SEGMENT_QUARANTINED = "SEGMENT_QUARANTINED";

    public static final String LOG_TRUNCATED = "LOG_TRUNCATED";
    /** Retention removed segments of a partition (once per retention pass that removed any). */
    public static final String SEGMENT_DELETED = "SEGMENT_DELETED";
    /**
     * An append, flush or checkpoint of a partition failed because its log dir's file system is full
     * (once per full episode of that log; {@link StorageMetrics#diskFull}).
     */
    public static final String DISK_FULL = "DISK_FULL";
    /**
     * A write of a partition failed for another reason than a full file system (an I/O error, or a
     * fault such as an {@link InternalError} in a mapped write): the partition refuses writes from
     * then on; once per partition ({@code io.stellflow.broker.topic.PartitionFailures}).
     */
    public static final String PARTITION_FAILED = "PARTITION_FAILED";
    /**
     * A partition whose write had failed on a full file system recovered in place once its log dir
     * had room again: its log was reopened and its tail recovered, it takes writes again (INFO, once
     * per recovery; {@code io.stellflow.broker.topic.DiskFullRecovery}).
     */
    public static final String PARTITION_RECOVERED = "PARTITION_RECOVERED";

    /**
     * A watched broker thread ended while its owner was open (ERROR, once per stop; {@code thread=
     * owner= lastBeatMsAgo=}); its work is restarted on a new thread, or the broker stays fenced
     * ({@code io.stellflow.broker.watchdog.ThreadWatchdog}).
     */
    public static final String THREAD_STOPPED = "THREAD_STOPPED";
    /**
     * A watched broker thread has not beaten for {@code broker.thread.stall.timeout.ms} (ERROR with
     * its stack, once per stall; {@code thread= owner= stalledMs=}): its partitions refuse appends and
     * the broker asks to be fenced until {@link #THREAD_RESUMED}.
     */
    public static final String THREAD_STUCK = "THREAD_STUCK";
    /** A stuck watched thread beats again (INFO, once per stall; {@code thread= owner= stalledMs=}). */
    public static final String THREAD_RESUMED = "THREAD_RESUMED";
    /**
     * A log dir went offline (an I/O error other than a full file system, or the dir or a partition
     * dir on it gone or inaccessible): its partitions are not served on this broker until a restart,
     * the controller moves their leadership (ERROR, once per dir; {@code
     * io.stellflow.broker.topic.LogDirFailures}).
     */
    public static final String LOG_DIR_OFFLINE = "LOG_DIR_OFFLINE";
}
