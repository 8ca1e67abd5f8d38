// Kafka's side of the consumer-group cases of the perf lab (perf/lab-groups.sh): the system-neutral
// driver io.stellflow.perf.groups.GroupBench (perf jar) over Kafka's own KafkaConsumer with
// group.protocol=consumer (KIP-848, broker-side assignor "uniform"). A Java source-file program
// (JEP 330), so that no module of ours depends on kafka-clients:
//   java -cp "$KAFKA_LIB/*:perf/target/stellflow-perf-<v>.jar" perf/kafka/KafkaGroupBench.java \
//       rebalance|commit|consume --bootstrap-server H:P --topic T --partitions P ...
// ($KAFKA_LIB from perf/kafka/fetch-kafka.sh, which also carries HdrHistogram.) Output: the
// GroupBench lines on stdout. Kept in step with perf/groups/StellflowGroupBench.java: the same
// properties, the same calls, one adapter method per GroupClient method.

import io.stellflow.perf.groups.GroupBench;
import io.stellflow.perf.groups.GroupClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class KafkaGroupBench {
    public static void main(String[] args) throws Exception {
        System.exit(GroupBench.run(args, KafkaClient::new));
    }

    static final class KafkaClient implements GroupClient {
        private final KafkaConsumer<byte[], byte[]> consumer;
        private long valueBytes;

        KafkaClient(String bootstrap, String groupId, String clientId, Map<String, String> extra) {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("client.id", clientId);
            p.put("key.deserializer", ByteArrayDeserializer.class.getName());
            p.put("value.deserializer", ByteArrayDeserializer.class.getName());
            p.put("auto.offset.reset", "earliest");
            if (groupId != null) {
                p.put("group.id", groupId);
                p.put("group.protocol", "consumer");
                p.put("group.remote.assignor", "uniform");
            }
            p.putAll(extra);
            consumer = new KafkaConsumer<>(p);
        }

        @Override
        public void subscribe(String topic, Listener listener) {
            consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    listener.revoked(numbers(partitions));
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    listener.assigned(numbers(partitions));
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    listener.revoked(numbers(partitions));
                }
            });
        }

        @Override
        public void assign(String topic, int partitions) {
            List<TopicPartition> all = new ArrayList<>(partitions);
            for (int i = 0; i < partitions; i++) {
                all.add(new TopicPartition(topic, i));
            }
            consumer.assign(all);
            consumer.seekToBeginning(all);
        }

        @Override
        public int poll(long timeoutMs) {
            ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(timeoutMs));
            for (ConsumerRecord<byte[], byte[]> r : records) {
                valueBytes += r.value() == null ? 0 : r.value().length;
            }
            return records.count();
        }

        @Override
        public long valueBytes() {
            return valueBytes;
        }

        @Override
        public boolean commitSync(String topic, int partition, long offset) {
            try {
                consumer.commitSync(Map.of(new TopicPartition(topic, partition), new OffsetAndMetadata(offset)));
                return true;
            } catch (KafkaException e) {
                return false;
            }
        }

        @Override
        public void close() {
            consumer.close();
        }

        private static List<Integer> numbers(Collection<TopicPartition> partitions) {
            List<Integer> out = new ArrayList<>(partitions.size());
            for (TopicPartition tp : partitions) {
                out.add(tp.partition());
            }
            return out;
        }
    }
}
