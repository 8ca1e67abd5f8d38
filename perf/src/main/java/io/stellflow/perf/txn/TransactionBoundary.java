package io.stellflow.perf.txn;

/**
 * When {@link TxnBench}'s {@code produce} case ends a transaction: after {@code durationNs} since it
 * began (Kafka's {@code ProducerPerformance --transaction-duration-ms} model: checked after each send,
 * so a transaction holds the records sent until the first send at or past the duration), or after
 * {@code maxRecords} records, whichever comes first; 0 switches a limit off.
 *
 * <p>Thread-safety: confined to the bench's sending thread.
 */
final class TransactionBoundary {
    private final long durationNs;
    private final long maxRecords;
    private long beganNs;
    private long records;

    /**
     * @param durationMs end a transaction this long after it began (ms), 0 for no time limit
     * @param maxRecords end a transaction after this many records, 0 for no count limit
     * @throws IllegalArgumentException when a limit is negative or both are 0
     */
    TransactionBoundary(long durationMs, long maxRecords) {
        if (durationMs < 0 || maxRecords < 0 || (durationMs == 0 && maxRecords == 0)) {
            throw new IllegalArgumentException("a transaction needs --transaction-duration-ms > 0 or"
                    + " --transaction-records > 0, got " + durationMs + " ms and " + maxRecords + " records");
        }
        this.durationNs = durationMs * 1_000_000L;
        this.maxRecords = maxRecords;
    }

    /** A transaction began at {@code nowNs} ({@code System.nanoTime()}). */
    void begin(long nowNs) {
        beganNs = nowNs;
        records = 0;
    }

    /** Counts one record sent at {@code nowNs}; returns true when the transaction should end now. */
    boolean afterSend(long nowNs) {
        records++;
        return (maxRecords > 0 && records >= maxRecords) || (durationNs > 0 && nowNs - beganNs >= durationNs);
    }

    /** Records sent in the current transaction. */
    long records() {
        return records;
    }
}
