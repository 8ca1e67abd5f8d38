package io.stellflow.client;

/**
 * Which threads are running a producer's batch completions at this moment: the callbacks and future
 * stages of batches that still count as incomplete, since {@link ProducerAccumulator#finish} comes
 * after them. A {@code close} called from such a callback must not wait for those batches, which
 * complete only once it returns ({@link StellflowProducer#close(java.time.Duration)}). This matters
 * on threads that are not the producer's own: an application thread that compressed a batch whose
 * codec failed, or whose abort fails the transaction's unsent records. Nesting counts (a callback's
 * {@code send} may compress and fail another batch).
 *
 * <p>Thread-safety: each thread sees and changes only its own count. One {@code int[1]} per thread
 * that ever completes a batch of this producer or asks, nothing per batch.
 */
final class ProducerCompletingThreads {
    private final ThreadLocal<int[]> depth = ThreadLocal.withInitial(() -> new int[1]);

    /** The calling thread starts completing batches; pair with {@link #exit} in a finally. */
    void enter() {
        depth.get()[0]++;
    }

    /** The calling thread is done with the completions {@link #enter} began. */
    void exit() {
        depth.get()[0]--;
    }

    /** Whether the calling thread is inside a completion of this producer's batches now. */
    boolean currentThreadCompleting() {
        return depth.get()[0] > 0;
    }
}
