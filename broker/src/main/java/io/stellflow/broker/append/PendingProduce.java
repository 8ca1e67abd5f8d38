package io.stellflow.broker.append;

import io.stellflow.broker.network.RequestContext;
import io.stellflow.protocol.message.ProduceResponse;
import io.stellflow.protocol.message.ProduceResponse.PartitionResponse;
import io.stellflow.protocol.message.ProduceResponse.TopicResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A Produce request whose partitions are being appended by agents: one result slot per request
 * partition (in request order), filled by whichever thread finishes that partition; the thread
 * that fills the last slot sends the response.
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

    /**
     * @param context the request to answer
     * @param topics topic names in request order
     * @param topicOfSlot for each slot, the index of its topic in {@code topics}
     */
    public PendingProduce(RequestContext context, String[] topics, int[] topicOfSlot) {
        this.context = context;
        this.topics = topics;
        this.topicOfSlot = topicOfSlot;
        this.slots = new PartitionResponse[topicOfSlot.length];
        this.remaining = new AtomicInteger(topicOfSlot.length);
    }

    /** Fills slot {@code slot}; the last one answers the request. */
    public void complete(int slot, PartitionResponse response) {
        slots[slot] = response;
        if (remaining.decrementAndGet() == 0) {
            respond();
        }
    }

    private void respond() {
        List<TopicResponse> out = new ArrayList<>(topics.length);
        for (PartitionResponse r : slots) {
            if (r.errorCode() != 0) {
                context.markPartitionError();
                break;
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
}
