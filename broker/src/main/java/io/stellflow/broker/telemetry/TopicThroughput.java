package io.stellflow.broker.telemetry;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import io.stellflow.server.common.telemetry.InstrumentCallbacks;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToLongFunction;

/**
 * The per-topic throughput diagnostic ({@code metrics.topic.diagnostic.enabled=true}, issue 22):
 * {@code stellflow.topic.produce.bytes}, {@code stellflow.topic.produce.records} and {@code
 * stellflow.topic.fetch.bytes}, one series per topic this broker hosts a partition of (attributes
 * {@code node.id}, {@code topic}), to find which topic makes a broker busy.
 *
 * <p>Cost: the broker asks {@link #forTopic} once per partition it opens and keeps the {@link
 * Counters} on the partition, so the request path does a null check and, when on, a {@link
 * LongAdder} add per appended or fetched partition: no map lookup, no allocation. When the
 * diagnostic is off there is no instance at all and the partitions hold null.
 *
 * <p>The counters count what {@code stellflow.produce.bytes} / {@code .records} (records appended as
 * leader) and {@code stellflow.fetch.bytes} (records bytes read for Fetch responses, consumers and
 * followers alike) count, split by topic. A topic's series stays until the broker restarts (a deleted
 * topic's counter stops moving).
 *
 * <p>Thread-safety: any thread.
 */
public final class TopicThroughput {
    private final int nodeId;
    private final Map<String, Counters> topics = new ConcurrentHashMap<>();

    /** One topic's counters, shared by the partitions of that topic on this broker. */
    public static final class Counters {
        private final Attributes attributes;
        private final LongAdder produceBytes = new LongAdder();
        private final LongAdder produceRecords = new LongAdder();
        private final LongAdder fetchBytes = new LongAdder();

        Counters(Attributes attributes) {
            this.attributes = attributes;
        }

        /** Records appended as leader: {@code bytes} of batches holding {@code records} records. */
        public void produced(long bytes, long records) {
            produceBytes.add(bytes);
            produceRecords.add(records);
        }

        /** Records bytes read into one Fetch response for one partition. */
        public void fetched(long bytes) {
            fetchBytes.add(bytes);
        }

        long produceBytes() {
            return produceBytes.sum();
        }

        long produceRecords() {
            return produceRecords.sum();
        }

        long fetchBytes() {
            return fetchBytes.sum();
        }
    }

    /** Registers the three counters on {@code callbacks}. */
    TopicThroughput(InstrumentCallbacks callbacks, int nodeId) {
        this.nodeId = nodeId;
        callbacks.counter(BrokerInstruments.TOPIC_PRODUCE_BYTES, m -> report(m, Counters::produceBytes));
        callbacks.counter(BrokerInstruments.TOPIC_PRODUCE_RECORDS, m -> report(m, Counters::produceRecords));
        callbacks.counter(BrokerInstruments.TOPIC_FETCH_BYTES, m -> report(m, Counters::fetchBytes));
    }

    /** The counters of {@code topic}, created on its first partition; call once per partition opened. */
    public Counters forTopic(String topic) {
        return topics.computeIfAbsent(
                topic, t -> new Counters(Attributes.of(BrokerMetrics.NODE_ID, (long) nodeId, BrokerMetrics.TOPIC, t)));
    }

    private void report(ObservableLongMeasurement m, ToLongFunction<Counters> value) {
        for (Counters c : topics.values()) {
            m.record(value.applyAsLong(c), c.attributes);
        }
    }
}
