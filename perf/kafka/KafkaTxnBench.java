// Kafka's side of the transactional cases of the perf lab (perf/lab-transactions.sh, issue #20): the
// system-neutral driver io.stellflow.perf.txn.TxnBench (perf jar) over Kafka's own KafkaProducer
// (transactional.id for transactions; enable.idempotence=true and acks=all always) and KafkaConsumer
// (group.protocol=consumer, KIP-848, as the group lab; isolation.level as the driver asks;
// enable.auto.commit=false: the driver commits). A Java source-file program (JEP 330), so that no
// module of ours depends on kafka-clients:
//   java -cp "$KAFKA_LIB/*:perf/target/stellflow-perf-<v>.jar" perf/kafka/KafkaTxnBench.java \
//       produce|ctp --bootstrap-server H:P ...
// Kept in step with perf/txn/StellflowTxnBench.java: the same properties, the same calls, one
// adapter method per TxnClient method. The one difference is Kafka 4's API: sendOffsetsToTransaction
// takes the consumer's group metadata (group id, member id, generation), no longer a bare group id.

import io.stellflow.perf.txn.TxnBench;
import io.stellflow.perf.txn.TxnClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class KafkaTxnBench {
    public static void main(String[] args) throws Exception {
        System.exit(TxnBench.run(args, new Factory()));
    }

    static final class Factory implements TxnClient.Factory {
        @Override
        public TxnClient.Producer producer(String bootstrap, String transactionalId, Map<String, String> props) {
            return new Producer(bootstrap, transactionalId, props);
        }

        @Override
        public TxnClient.Consumer consumer(
                String bootstrap, String groupId, boolean readCommitted, Map<String, String> props) {
            return new Consumer(bootstrap, groupId, readCommitted, props);
        }
    }

    static final class Producer implements TxnClient.Producer {
        private final KafkaProducer<byte[], byte[]> producer;

        Producer(String bootstrap, String transactionalId, Map<String, String> extra) {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("key.serializer", ByteArraySerializer.class.getName());
            p.put("value.serializer", ByteArraySerializer.class.getName());
            p.put("acks", "all");
            p.put("enable.idempotence", "true");
            if (transactionalId != null) {
                p.put("transactional.id", transactionalId);
            }
            p.putAll(extra);
            producer = new KafkaProducer<>(p);
        }

        @Override
        public void initTransactions() {
            producer.initTransactions();
        }

        @Override
        public void beginTransaction() {
            producer.beginTransaction();
        }

        @Override
        public void send(String topic, int partition, byte[] key, byte[] value, TxnClient.SendCallback callback) {
            producer.send(new ProducerRecord<>(topic, partition, key, value), (metadata, e) -> callback.done(e));
        }

        @Override
        public void flush() {
            producer.flush();
        }

        @Override
        public void commitTransaction() {
            producer.commitTransaction();
        }

        @Override
        public void abortTransaction() {
            producer.abortTransaction();
        }

        @Override
        public void sendOffsetsToTransaction(String topic, Map<Integer, Long> offsets, TxnClient.Consumer groupConsumer) {
            Map<TopicPartition, OffsetAndMetadata> kafkaOffsets = new HashMap<>();
            offsets.forEach((p, o) -> kafkaOffsets.put(new TopicPartition(topic, p), new OffsetAndMetadata(o)));
            producer.sendOffsetsToTransaction(kafkaOffsets, ((Consumer) groupConsumer).consumer.groupMetadata());
        }

        @Override
        public void close() {
            producer.close();
        }
    }

    static final class Consumer implements TxnClient.Consumer {
        private final KafkaConsumer<byte[], byte[]> consumer;
        private final String groupId;

        Consumer(String bootstrap, String groupId, boolean readCommitted, Map<String, String> extra) {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("key.deserializer", ByteArrayDeserializer.class.getName());
            p.put("value.deserializer", ByteArrayDeserializer.class.getName());
            p.put("auto.offset.reset", "earliest");
            p.put("enable.auto.commit", "false");
            p.put("isolation.level", readCommitted ? "read_committed" : "read_uncommitted");
            if (groupId != null) {
                p.put("group.id", groupId);
                p.put("group.protocol", "consumer");
            }
            p.putAll(extra);
            this.groupId = groupId;
            consumer = new KafkaConsumer<>(p);
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
        public void subscribe(String topic) {
            consumer.subscribe(List.of(topic));
        }

        @Override
        public int poll(long timeoutMs, TxnClient.RecordSink sink) {
            int n = 0;
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(timeoutMs))) {
                sink.record(r.partition(), r.offset(), r.value());
                n++;
            }
            return n;
        }

        @Override
        public long position(String topic, int partition) {
            return consumer.position(new TopicPartition(topic, partition));
        }

        @Override
        public void commitAsync(String topic, Map<Integer, Long> offsets) {
            Map<TopicPartition, OffsetAndMetadata> kafkaOffsets = new HashMap<>();
            offsets.forEach((p, o) -> kafkaOffsets.put(new TopicPartition(topic, p), new OffsetAndMetadata(o)));
            consumer.commitAsync(kafkaOffsets, null);
        }

        @Override
        public String groupId() {
            return groupId;
        }

        @Override
        public void close() {
            consumer.close();
        }
    }
}
