package io.stellflow.perf.txn;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-memory system for {@link TxnBench}: topics of partitions, each a list of entries; a
 * transactional producer's records are appended at send as undecided and become visible to {@code
 * read_committed} readers when their transaction commits (a reader stops at the first undecided entry,
 * as at a last stable offset; aborted entries are skipped). Group offsets sent to a transaction apply at
 * its commit. A group consumer owns every partition at once, from its group's committed offsets. All
 * state is guarded by this object's monitor.
 */
final class FakeTxnSystem implements TxnClient.Factory {
    private enum State {
        UNDECIDED,
        COMMITTED,
        ABORTED
    }

    private static final class Entry {
        final byte[] value;
        State state;

        Entry(byte[] value, State state) {
            this.value = value;
            this.state = state;
        }
    }

    private final int partitions;
    private final Map<String, List<List<Entry>>> topics = new HashMap<>();
    private final Map<String, Map<String, Long>> groupOffsets = new HashMap<>();
    final AtomicInteger begins = new AtomicInteger();
    final AtomicInteger commits = new AtomicInteger();
    final AtomicInteger asyncCommits = new AtomicInteger();
    final List<String> transactionalIds = new ArrayList<>();
    /** Fail every send with this error when not null. */
    volatile RuntimeException sendError;
    /** Fail initTransactions, or the commit of the transaction numbered {@code failCommitAt} (1-based), when set. */
    volatile RuntimeException initError;

    volatile int failCommitAt;
    final AtomicInteger aborts = new AtomicInteger();
    /** Group consumers never get a partition. */
    volatile boolean neverAssign;

    FakeTxnSystem(int partitions) {
        this.partitions = partitions;
    }

    private synchronized List<Entry> log(String topic, int partition) {
        return topics.computeIfAbsent(topic, t -> {
                    List<List<Entry>> ps = new ArrayList<>();
                    for (int i = 0; i < partitions; i++) {
                        ps.add(new ArrayList<>());
                    }
                    return ps;
                })
                .get(partition);
    }

    synchronized int committedRecords(String topic) {
        int n = 0;
        for (int p = 0; p < partitions; p++) {
            for (Entry e : log(topic, p)) {
                n += e.state == State.COMMITTED ? 1 : 0;
            }
        }
        return n;
    }

    synchronized long groupOffset(String group, String topic, int partition) {
        return groupOffsets.getOrDefault(group, Map.of()).getOrDefault(topic + "-" + partition, 0L);
    }

    @Override
    public synchronized TxnClient.Producer producer(
            String bootstrap, String transactionalId, Map<String, String> props) {
        transactionalIds.add(transactionalId);
        return new Producer(transactionalId != null);
    }

    @Override
    public TxnClient.Consumer consumer(
            String bootstrap, String groupId, boolean readCommitted, Map<String, String> props) {
        return new Consumer(groupId, readCommitted);
    }

    private final class Producer implements TxnClient.Producer {
        private final boolean transactional;
        private final List<Entry> open = new ArrayList<>();
        private final Map<String, Long> openOffsets = new HashMap<>();
        private String openGroup;
        private boolean initialized;

        Producer(boolean transactional) {
            this.transactional = transactional;
        }

        @Override
        public void initTransactions() {
            if (!transactional) {
                throw new IllegalStateException("initTransactions without a transactional.id");
            }
            if (initError != null) {
                throw initError;
            }
            initialized = true;
        }

        @Override
        public void beginTransaction() {
            if (!initialized) {
                throw new IllegalStateException("beginTransaction before initTransactions");
            }
            begins.incrementAndGet();
        }

        @Override
        public void send(String topic, int partition, byte[] key, byte[] value, TxnClient.SendCallback callback) {
            if (sendError != null) {
                callback.done(sendError);
                return;
            }
            Entry e = new Entry(value, transactional ? State.UNDECIDED : State.COMMITTED);
            synchronized (FakeTxnSystem.this) {
                log(topic, partition).add(e);
            }
            if (transactional) {
                open.add(e);
            }
            callback.done(null);
        }

        @Override
        public void flush() {}

        @Override
        public void commitTransaction() {
            if (failCommitAt == commits.get() + 1) {
                throw new IllegalStateException("commit refused");
            }
            end(State.COMMITTED);
            commits.incrementAndGet();
        }

        @Override
        public void abortTransaction() {
            end(State.ABORTED);
            aborts.incrementAndGet();
        }

        private void end(State state) {
            synchronized (FakeTxnSystem.this) {
                open.forEach(e -> e.state = state);
                if (state == State.COMMITTED && openGroup != null) {
                    groupOffsets
                            .computeIfAbsent(openGroup, g -> new HashMap<>())
                            .putAll(openOffsets);
                }
            }
            open.clear();
            openOffsets.clear();
            openGroup = null;
        }

        @Override
        public void sendOffsetsToTransaction(
                String topic, Map<Integer, Long> offsets, TxnClient.Consumer groupConsumer) {
            openGroup = groupConsumer.groupId();
            offsets.forEach((p, o) -> openOffsets.put(topic + "-" + p, o));
        }

        @Override
        public void close() {}
    }

    private final class Consumer implements TxnClient.Consumer {
        private final String groupId;
        private final boolean readCommitted;
        private String topic;
        private long[] positions;

        Consumer(String groupId, boolean readCommitted) {
            this.groupId = groupId;
            this.readCommitted = readCommitted;
        }

        @Override
        public void assign(String topic, int count) {
            this.topic = topic;
            this.positions = new long[count];
        }

        @Override
        public void subscribe(String topic) {
            if (neverAssign) {
                return;
            }
            this.topic = topic;
            this.positions = new long[partitions];
            for (int p = 0; p < partitions; p++) {
                positions[p] = groupOffset(groupId, topic, p);
            }
        }

        @Override
        public int poll(long timeoutMs, TxnClient.RecordSink sink) {
            int n = 0;
            if (positions != null) {
                List<long[]> got = new ArrayList<>();
                List<byte[]> values = new ArrayList<>();
                synchronized (FakeTxnSystem.this) {
                    for (int p = 0; p < positions.length; p++) {
                        List<Entry> log = log(topic, p);
                        while (positions[p] < log.size()) {
                            Entry e = log.get((int) positions[p]);
                            if (readCommitted && e.state == State.UNDECIDED) {
                                break;
                            }
                            if (!readCommitted || e.state == State.COMMITTED) {
                                got.add(new long[] {p, positions[p]});
                                values.add(e.value);
                            }
                            positions[p]++;
                        }
                    }
                }
                for (int i = 0; i < got.size(); i++) {
                    sink.record((int) got.get(i)[0], got.get(i)[1], values.get(i));
                }
                n = got.size();
            }
            if (n == 0) {
                try {
                    Thread.sleep(Math.min(timeoutMs, 2));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return n;
        }

        @Override
        public long position(String topic, int partition) {
            return positions[partition];
        }

        @Override
        public void commitAsync(String topic, Map<Integer, Long> offsets) {
            synchronized (FakeTxnSystem.this) {
                offsets.forEach((p, o) -> groupOffsets
                        .computeIfAbsent(groupId, g -> new HashMap<>())
                        .put(topic + "-" + p, o));
            }
            asyncCommits.incrementAndGet();
        }

        @Override
        public String groupId() {
            return groupId;
        }

        @Override
        public void close() {}
    }
}
