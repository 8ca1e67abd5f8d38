package io.stellflow.broker.transaction;

/**
 * The state of a transactional id at its coordinator ({@code docs/exactly-once.md}, "Transaction
 * coordinator"), stored as one byte ({@link #id}) in the {@code __transaction_state} value.
 *
 * <pre>
 * EMPTY ──Begin──▶ ONGOING ──End(commit)──▶ PREPARE_COMMIT ──markers written──▶ COMPLETE_COMMIT
 *                    │  └────End(abort), timeout, InitProducerId──▶ PREPARE_ABORT ──▶ COMPLETE_ABORT
 * COMPLETE_* ──Begin──▶ ONGOING
 * </pre>
 *
 * <p>Thread-safety: immutable.
 */
public enum TransactionState {
    /** Bound to a producer id, no transaction yet (or since the last InitProducerId). */
    EMPTY(0, "EMPTY"),
    /** A transaction is open: Begin was answered, End not yet. */
    ONGOING(1, "ONGOING"),
    /** End(commit) is recorded; the COMMIT markers are being written. */
    PREPARE_COMMIT(2, "COMMITTING"),
    /** End(abort), a timeout or a new instance's InitProducerId is recorded; ABORT markers are being written. */
    PREPARE_ABORT(3, "ABORTING"),
    /** Every partition of the last transaction has its COMMIT marker. */
    COMPLETE_COMMIT(4, "COMMITTED"),
    /** Every partition of the last transaction has its ABORT marker. */
    COMPLETE_ABORT(5, "ABORTED");

    private final byte id;
    private final String wireName;

    TransactionState(int id, String wireName) {
        this.id = (byte) id;
        this.wireName = wireName;
    }

    /** The stored byte. */
    public byte id() {
        return id;
    }

    /** The name EndTransaction/BeginTransaction answer in {@code transactionState} (§6.13). */
    public String wireName() {
        return wireName;
    }

    /** Whether markers are being written (PREPARE_COMMIT or PREPARE_ABORT). */
    public boolean isPreparing() {
        return this == PREPARE_COMMIT || this == PREPARE_ABORT;
    }

    /** Whether no transaction is open or completing: a Begin may start one. */
    public boolean isIdle() {
        return this == EMPTY || this == COMPLETE_COMMIT || this == COMPLETE_ABORT;
    }

    /**
     * @throws IllegalArgumentException for a byte no state has (a record of a newer broker)
     */
    public static TransactionState of(byte id) {
        for (TransactionState s : values()) {
            if (s.id == id) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown transaction state " + id);
    }
}
