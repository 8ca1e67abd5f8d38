package io.stellflow.client;

/**
 * The compression queue's outcomes for the accumulator's partition queues ({@link
 * ProducerCompressionQueue.Listener}). A compressed batch updates its partition's compression ratio
 * estimate and wakes the sender. A batch compressed after a forced close ({@link
 * ProducerAccumulator#forceClose}: the sender is gone, or fails what it holds) leaves its queue at
 * once, under the lock that publishes it, so nothing else takes it, and fails on the thread that
 * compressed it: that thread owned its bytes until then (its buffer is given back once, by that
 * failure), as a reset leaves a half being compressed to be failed once it is READY. A codec failure
 * fails the batch the same way ({@link ProducerAccumulator#failOffSender}); one after a forced close
 * (a thread that took its batch just before it, whose codec the close freed) fails with the forced
 * close's error too: the batch was never sent, and the producer is closed.
 *
 * <p>Thread-safety: called by whichever thread compressed the batch (the compressor thread or an
 * application thread helping); {@link #compressed} under the accumulator's lock, {@link #failed}
 * without it (it takes the lock itself).
 */
final class ProducerCompressionOutcomes implements ProducerCompressionQueue.Listener {
    private final ProducerAccumulator accumulator;

    ProducerCompressionOutcomes(ProducerAccumulator accumulator) {
        this.accumulator = accumulator;
    }

    @Override
    public StellflowException compressed(ProducerBatch batch, double ratio) {
        if (accumulator.forcedCloseLocked()) {
            accumulator.dropLocked(batch);
            return ProduceErrors.closedForcefully(batch, false);
        }
        ProducerPartitionQueue q = accumulator.queueLocked(batch.tp);
        q.compressionRatio = ProducerCompression.nextCompressionRatio(
                q.compressionRatio, ratio, (double) batch.uncompressedBytes() / batch.fillLimitBytes());
        accumulator.wakeSenderLocked();
        return null;
    }

    @Override
    public void failed(ProducerBatch batch, StellflowException error) {
        StellflowException failure = error;
        accumulator.lock.lock();
        try {
            // Still queued after a codec failure; out already when compressed() refused it.
            accumulator.dropLocked(batch);
            if (accumulator.forcedCloseLocked()) {
                failure = ProduceErrors.closedForcefully(batch, false);
                // The codec's own error (the closed codecs', or a real failure) stays with it.
                failure.addSuppressed(error);
            }
        } finally {
            accumulator.lock.unlock();
        }
        accumulator.failOffSender(batch, failure);
    }
}
