package io.stellflow.broker.append;

import io.netty.util.Timer;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.topic.Partition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.message.ProduceResponse.TopicResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A Produce request whose partitions are being appended: one result slot per request partition (in
 * request order), filled by whichever thread finishes that partition; the thread that fills the last
 * slot sends the response.
 *
 * <p>acks=-1 ({@code docs/spec/wire-protocol.md} §6.3 step 8): a successful local append fills its
 * slot only once the partition's high watermark passed the appended records ({@link #appended});
 * until then the slot waits as a {@link DelayedProduce} (no thread held) that ends with the
 * append's result, or {@code REQUEST_TIMED_OUT} after the request's timeoutMs, or {@code
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND}, or {@code NOT_LEADER_OR_FOLLOWER} when leadership moved.
 * acks=0 and 1 fill it at once.
 *
 * <p>Versions: codes allocated from 32 go out only in Produce v1 responses; a v0 response carries the
 * spec's fallback ({@link Errors#v0Fallback}: 7 BROKER_NOT_AVAILABLE).
 *
 * <p>Thread-safety: each slot is written by exactly one thread before it decrements {@code
 * remaining} (a release); the last decrementer reads all slots after it (an acquire).
 */
public final class PendingProduce {
    private final RequestContext context;
    private final String[] topics;
    private final int[] topicOfSlot;
    private final PartitionResponse[] slots;
    private final AtomicInteger remaining;
    private final short acks;
    private final int timeoutMs;
    private final Timer timer;
    /** Takes the slots instead of a Produce response (transaction markers); null for a Produce. */
    private final Consumer<PartitionResponse[]> sink;

    /**
     * A request answered right after the local appends (acks 0 or 1).
     *
     * @param context the request to answer
     * @param topics topic names in request order
     * @param topicOfSlot for each slot, the index of its topic in {@code topics}
     */
    public PendingProduce(RequestContext context, String[] topics, int[] topicOfSlot) {
        this(context, topics, topicOfSlot, (short) 1, 0, null);
    }

    /**
     * @param context the request to answer
     * @param topics topic names in request order
     * @param topicOfSlot for each slot, the index of its topic in {@code topics}
     * @param acks the request's acks (0, 1 or -1)
     * @param timeoutMs the request's timeoutMs: how long an acks=-1 slot waits for the high watermark
     * @param timer the timer wheel that expires acks=-1 waits (required when {@code acks} is -1)
     */
    public PendingProduce(
            RequestContext context, String[] topics, int[] topicOfSlot, short acks, int timeoutMs, Timer timer) {
        if (acks == -1 && timer == null) {
            throw new IllegalArgumentException("acks=-1 needs a timer");
        }
        this.context = context;
        this.topics = topics;
        this.topicOfSlot = topicOfSlot;
        this.slots = new PartitionResponse[topicOfSlot.length];
        this.remaining = new AtomicInteger(topicOfSlot.length);
        this.acks = acks;
        this.timeoutMs = timeoutMs;
        this.timer = timer;
        this.sink = null;
    }

    /**
     * Appends answered to {@code sink} instead of a client (transaction markers): acks=-1, so each
     * slot is filled once the high watermark passed its append, or with {@code REQUEST_TIMED_OUT}
     * after {@code timeoutMs}. {@code sink} gets the {@code slotCount} responses, in slot order, on
     * the thread that filled the last slot; it must be short.
     */
    public PendingProduce(Consumer<PartitionResponse[]> sink, int slotCount, int timeoutMs, Timer timer) {
        if (timer == null) {
            throw new IllegalArgumentException("acks=-1 needs a timer");
        }
        this.context = null;
        this.topics = null;
        this.topicOfSlot = null;
        this.slots = new PartitionResponse[slotCount];
        this.remaining = new AtomicInteger(slotCount);
        this.acks = -1;
        this.timeoutMs = timeoutMs;
        this.timer = timer;
        this.sink = sink;
    }

    /**
     * Slot {@code slot} was appended to {@code partition} with {@code response} (errorCode 0); the
     * records end before {@code nextOffset}. acks 0/1, or a HW already at {@code nextOffset}: filled
     * now (no allocation); acks=-1 otherwise: parked until the HW passes {@code nextOffset}.
     */
    public void appended(int slot, Partition partition, PartitionResponse response, long nextOffset) {
        if (acks != -1 || partition.highWatermark() >= nextOffset) {
            complete(slot, response);
            return;
        }
        DelayedProduce.park(this, slot, partition, response, nextOffset, timeoutMs, timer);
    }

    /** Fills slot {@code slot}; the last one answers the request. */
    public void complete(int slot, PartitionResponse response) {
        slots[slot] = response;
        if (remaining.decrementAndGet() == 0) {
            respond();
        }
    }

    private void respond() {
        if (sink != null) {
            sink.accept(slots);
            return;
        }
        List<TopicResponse> out = new ArrayList<>(topics.length);
        for (PartitionResponse r : slots) {
            if (r.errorCode() != 0) {
                context.markPartitionError();
                break;
            }
        }
        if (context.header().apiVersion() < 1) {
            for (int i = 0; i < slots.length; i++) {
                slots[i] = forV0(slots[i]);
            }
        }
        int slot = 0;
        for (int t = 0; t < topics.length; t++) {
            List<PartitionResponse> partitions = new ArrayList<>();
            while (slot < slots.length && topicOfSlot[slot] == t) {
                partitions.add(slots[slot++]);
            }
            out.add(new TopicResponse(topics[t], partitions));
        }
        context.respond(new ProduceResponse(out));
    }

    /** The response as a v0 client may see it: codes from 28 up replaced by their fallback. */
    public static PartitionResponse forV0(PartitionResponse r) {
        short code = Errors.v0Fallback(r.errorCode());
        return code == r.errorCode()
                ? r
                : new PartitionResponse(
                        r.partition(),
                        code,
                        r.baseOffset(),
                        r.currentLeaderEpoch(),
                        r.logAppendTimeMs(),
                        r.logStartOffset());
    }
}
