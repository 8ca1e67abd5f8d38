// Our side of the transactional cases of the perf lab (perf/lab-transactions.sh, issue #20): the
// system-neutral driver io.stellflow.perf.txn.TxnBench over our StellflowProducer (transactional.id
// for transactions; enable.idempotence=true and acks=all always) and StellflowConsumer (group.id with
// subscribe: our group protocol, ConsumerGroupHeartbeat key 20; isolation.level as the driver asks;
// enable.auto.commit=false: the driver commits). A Java source-file program (JEP 330), like Kafka's
// side (perf/kafka/KafkaTxnBench.java), which it mirrors call for call:
//   java -cp "perf/target/stellflow-perf-<v>.jar:perf/target/lib/*" perf/txn/StellflowTxnBench.java \
//       produce|ctp --bootstrap-server H:P ...
// A source file rather than a class of the perf module while the producer's transactional API
// (issue #20, point 5: initTransactions, beginTransaction, commitTransaction, abortTransaction,
// sendOffsetsToTransaction(offsets, groupId)) lands: it is compiled at launch against whatever client
// the perf build copied into perf/target/lib, so the perf module builds without it, and the lab skips
// our side (adapter_check) until it compiles. The transactional calls go through call(), which
// accepts them with or without checked exceptions.

import io.stellflow.client.ConsumerRecord;
import io.stellflow.client.ProducerRecord;
import io.stellflow.client.StellflowConsumer;
import io.stellflow.client.StellflowProducer;
import io.stellflow.client.TopicPartition;
import io.stellflow.perf.txn.TxnBench;
import io.stellflow.perf.txn.TxnClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

public final class StellflowTxnBench {
    public static void main(String[] args) throws Exception {
        System.exit(TxnBench.run(args, new Factory()));
    }

    /** A client call that may declare checked exceptions. */
    @FunctionalInterface
    interface Call {
        void run() throws Exception;
    }

    /** Runs {@code c}; a checked exception comes back unchecked (the bench counts it as an error). */
    static void call(Call c) {
        try {
            c.run();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException(e);
        }
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
        private final StellflowProducer producer;

        Producer(String bootstrap, String transactionalId, Map<String, String> extra) {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("acks", "all");
            p.put("enable.idempotence", "true");
            if (transactionalId != null) {
                p.put("transactional.id", transactionalId);
            }
            p.putAll(extra);
            producer = new StellflowProducer(p);
        }

        @Override
        public void initTransactions() {
            call(producer::initTransactions);
        }

        @Override
        public void beginTransaction() {
            call(producer::beginTransaction);
        }

        @Override
        public void send(String topic, int partition, byte[] key, byte[] value, TxnClient.SendCallback callback) {
            producer.send(new ProducerRecord(topic, partition, key, value), (metadata, e) -> callback.done(e));
        }

        @Override
        public void flush() {
            call(producer::flush);
        }

        @Override
        public void commitTransaction() {
            call(producer::commitTransaction);
        }

        @Override
        public void abortTransaction() {
            call(producer::abortTransaction);
        }

        @Override
        public void sendOffsetsToTransaction(String topic, Map<Integer, Long> offsets, TxnClient.Consumer groupConsumer) {
            Map<TopicPartition, Long> ours = new HashMap<>();
            offsets.forEach((p, o) -> ours.put(new TopicPartition(topic, p), o));
            call(() -> producer.sendOffsetsToTransaction(ours, groupConsumer.groupId()));
        }

        @Override
        public void close() {
            producer.close();
        }
    }

    static final class Consumer implements TxnClient.Consumer {
        private final StellflowConsumer consumer;
        private final String groupId;

        Consumer(String bootstrap, String groupId, boolean readCommitted, Map<String, String> extra) {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("auto.offset.reset", "earliest");
            p.put("enable.auto.commit", "false");
            p.put("isolation.level", readCommitted ? "read_committed" : "read_uncommitted");
            if (groupId != null) {
                p.put("group.id", groupId);
            }
            p.putAll(extra);
            this.groupId = groupId;
            consumer = new StellflowConsumer(p);
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
            List<ConsumerRecord> records = consumer.poll(Duration.ofMillis(timeoutMs));
            for (ConsumerRecord r : records) {
                sink.record(r.partition(), r.offset(), r.value());
            }
            return records.size();
        }

        @Override
        public long position(String topic, int partition) {
            return consumer.position(new TopicPartition(topic, partition));
        }

        @Override
        public void commitAsync(String topic, Map<Integer, Long> offsets) {
            Map<TopicPartition, Long> ours = new HashMap<>();
            offsets.forEach((p, o) -> ours.put(new TopicPartition(topic, p), o));
            consumer.commitAsync(ours, null);
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
