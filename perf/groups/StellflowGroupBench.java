// Our side of the consumer-group cases of the perf lab (perf/lab-groups.sh): the system-neutral
// driver io.stellflow.perf.groups.GroupBench over our StellflowConsumer with group.id and
// subscribe(topics, listener) (our group protocol, ConsumerGroupHeartbeat key 20, broker-side
// assignor "uniform"). A Java source-file program (JEP 330), like Kafka's side
// (perf/kafka/KafkaGroupBench.java), which it mirrors call for call:
//   java -cp "perf/target/stellflow-perf-<v>.jar:perf/target/lib/*" perf/groups/StellflowGroupBench.java \
//       rebalance|commit|consume --bootstrap-server H:P --topic T --partitions P ...
// A source file rather than a class of the perf module while the client's group API (issue #19,
// point 4) lands: it is compiled at launch, against whatever client the perf build copied into
// perf/target/lib, so the perf module builds without it.

import io.stellflow.client.ConsumerRebalanceListener;
import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowException;
import io.stellflow.client.TopicPartition;
import io.stellflow.perf.groups.GroupBench;
import io.stellflow.perf.groups.GroupClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;

public final class StellflowGroupBench {
    public static void main(String[] args) throws Exception {
        System.exit(GroupBench.run(args, StellflowClient::new));
    }

    static final class StellflowClient implements GroupClient {
        private final StellflowConsumer consumer;
        private long valueBytes;

        StellflowClient(String bootstrap, String groupId, String clientId, Map<String, String> extra) {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("client.id", clientId);
            p.put("auto.offset.reset", "earliest");
            if (groupId != null) {
                p.put("group.id", groupId);
                p.put("group.remote.assignor", "uniform");
            }
            p.putAll(extra);
            consumer = new StellflowConsumer(p);
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
            List<ConsumerRecord> records = consumer.poll(Duration.ofMillis(timeoutMs));
            for (ConsumerRecord r : records) {
                valueBytes += r.value() == null ? 0 : r.value().length;
            }
            return records.size();
        }

        @Override
        public long valueBytes() {
            return valueBytes;
        }

        @Override
        public boolean commitSync(String topic, int partition, long offset) {
            try {
                consumer.commitSync(Map.of(new TopicPartition(topic, partition), offset));
                return true;
            } catch (StellflowException e) {
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
