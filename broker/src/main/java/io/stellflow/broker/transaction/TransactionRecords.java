package io.stellflow.broker.transaction;

import io.stellflow.broker.coordinator.CoordinatorRecord;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.TreeSet;

/**
 * The record layout of {@code __transaction_state}: one record per transactional id, the last one
 * wins (the topic is compacted); a null value is a tombstone, written when the id expired ({@code
 * transactional.id.expiration.ms}). The key starts with an int16 record type, the value with an int16
 * value version (0 today). All big-endian; {@code string} = int16 length then UTF-8 bytes.
 *
 * <pre>
 * type 0  TRANSACTION  key:   int16 0 | string transactionalId (1..32767 bytes)
 *                      value: int16 0 (version)
 *                             | int64 producerId            (&gt;= 0)
 *                             | int16 producerEpoch         (&gt;= 0)
 *                             | int8  state                 ({@link TransactionState#id})
 *                             | int32 transactionTimeoutMs  (&gt;= 1)
 *                             | int64 transactionSequence   (&gt;= 0, +1 per Begin)
 *                             | int64 startTimestampMs      (-1: no transaction started yet)
 *                             | int64 lastUpdateTimestampMs
 *                             | int32 topicCount, then per topic (ascending):
 *                                 string topic | int32 partitionCount | int32 partition... (ascending)
 * </pre>
 *
 * <p>Worked example: id "tx", producer 1000 epoch 2, ONGOING, timeout 60000 ms, sequence 3, started
 * at 1000, updated at 1500, partitions t-0 and t-1:
 *
 * <pre>
 * key   00 00 | 00 02 74 78
 * value 00 00 | 00 00 00 00 00 00 03 e8 | 00 02 | 01 | 00 00 ea 60 | 00 00 00 00 00 00 00 03
 *       | 00 00 00 00 00 00 03 e8 | 00 00 00 00 00 00 05 dc
 *       | 00 00 00 01 | 00 01 74 | 00 00 00 02 | 00 00 00 00 | 00 00 00 01
 * </pre>
 *
 * <p>Decoding is strict: a short buffer, trailing bytes, a negative count or length, invalid UTF-8,
 * an unknown type, version or state, or a field out of its range throws {@link
 * IllegalArgumentException} (the runtime logs and skips such a record). Thread-safety: stateless.
 */
public final class TransactionRecords {
    /** The record type of a transactional id's state. */
    public static final short TRANSACTION = 0;

    /** The only value version written and read today. */
    public static final short VALUE_VERSION = 0;

    /** Fixed bytes of a value before the partitions: version 2, id 8, epoch 2, state 1, timeout 4, sequence 8, times 16, count 4. */
    static final int VALUE_FIXED_BYTES = 2 + 8 + 2 + 1 + 4 + 8 + 8 + 8 + 4;

    private TransactionRecords() {}

    /**
     * A transactional id's stored state.
     *
     * @param partitions the partitions of the current (or last) transaction, sorted, immutable
     */
    public record TransactionValue(
            long producerId,
            short producerEpoch,
            TransactionState state,
            int timeoutMs,
            long transactionSequence,
            long startTimestampMs,
            long lastUpdateTimestampMs,
            NavigableSet<TransactionPartition> partitions) {
        public TransactionValue {
            Objects.requireNonNull(state, "state");
            partitions = Collections.unmodifiableNavigableSet(new TreeSet<>(partitions));
        }
    }

    /** A decoded record: the id and its value, null for a tombstone. */
    public record Decoded(String transactionalId, TransactionValue value) {}

    /** The record of {@code transactionalId}'s state. */
    public static CoordinatorRecord record(String transactionalId, TransactionValue v) {
        return new CoordinatorRecord(key(transactionalId), value(v));
    }

    /** The tombstone deleting {@code transactionalId}'s state. */
    public static CoordinatorRecord tombstone(String transactionalId) {
        return new CoordinatorRecord(key(transactionalId), null);
    }

    static byte[] key(String transactionalId) {
        byte[] id = utf8(transactionalId);
        return ByteBuffer.allocate(2 + 2 + id.length)
                .putShort(TRANSACTION)
                .putShort((short) id.length)
                .put(id)
                .array();
    }

    static byte[] value(TransactionValue v) {
        int size = VALUE_FIXED_BYTES;
        List<byte[]> topics = new ArrayList<>();
        List<List<Integer>> parts = new ArrayList<>();
        String last = null;
        for (TransactionPartition tp : v.partitions()) {
            if (!tp.topic().equals(last)) {
                byte[] t = utf8(tp.topic());
                topics.add(t);
                parts.add(new ArrayList<>());
                size += 2 + t.length + 4;
                last = tp.topic();
            }
            parts.get(parts.size() - 1).add(tp.partition());
            size += 4;
        }
        ByteBuffer b = ByteBuffer.allocate(size)
                .putShort(VALUE_VERSION)
                .putLong(v.producerId())
                .putShort(v.producerEpoch())
                .put(v.state().id())
                .putInt(v.timeoutMs())
                .putLong(v.transactionSequence())
                .putLong(v.startTimestampMs())
                .putLong(v.lastUpdateTimestampMs())
                .putInt(topics.size());
        for (int i = 0; i < topics.size(); i++) {
            b.putShort((short) topics.get(i).length)
                    .put(topics.get(i))
                    .putInt(parts.get(i).size());
            for (int p : parts.get(i)) {
                b.putInt(p);
            }
        }
        return b.array();
    }

    /**
     * Decodes one record.
     *
     * @param value null for a tombstone
     * @throws IllegalArgumentException for a malformed or unknown record (the message names why)
     */
    public static Decoded decode(byte[] key, byte[] value) {
        ByteBuffer k = ByteBuffer.wrap(key);
        try {
            short type = k.getShort();
            if (type != TRANSACTION) {
                throw new IllegalArgumentException("unknown __transaction_state record type " + type);
            }
            String id = string(k, "transactionalId");
            end(k, "key");
            if (id.isEmpty()) {
                throw new IllegalArgumentException("empty transactionalId in __transaction_state key");
            }
            return new Decoded(id, value == null ? null : decodeValue(ByteBuffer.wrap(value)));
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("truncated __transaction_state record", e);
        }
    }

    private static TransactionValue decodeValue(ByteBuffer b) {
        short version = b.getShort();
        if (version != VALUE_VERSION) {
            throw new IllegalArgumentException("unknown __transaction_state value version " + version);
        }
        long producerId = b.getLong();
        short epoch = b.getShort();
        TransactionState state = TransactionState.of(b.get());
        int timeoutMs = b.getInt();
        long sequence = b.getLong();
        long start = b.getLong();
        long update = b.getLong();
        if (producerId < 0 || epoch < 0 || timeoutMs < 1 || sequence < 0) {
            throw new IllegalArgumentException("__transaction_state value out of range: producerId " + producerId
                    + ", epoch " + epoch + ", timeoutMs " + timeoutMs + ", sequence " + sequence);
        }
        int topics = count(b);
        TreeSet<TransactionPartition> partitions = new TreeSet<>();
        for (int i = 0; i < topics; i++) {
            String topic = string(b, "topic");
            int n = count(b);
            for (int j = 0; j < n; j++) {
                int p = b.getInt();
                if (p < 0 || !partitions.add(new TransactionPartition(topic, p))) {
                    throw new IllegalArgumentException(
                            "bad or repeated partition " + topic + "-" + p + " in __transaction_state value");
                }
            }
        }
        end(b, "value");
        return new TransactionValue(producerId, epoch, state, timeoutMs, sequence, start, update, partitions);
    }

    private static int count(ByteBuffer b) {
        int n = b.getInt();
        if (n < 0 || n > b.remaining()) {
            throw new IllegalArgumentException("bad count " + n + " in __transaction_state record");
        }
        return n;
    }

    private static String string(ByteBuffer b, String what) {
        int len = b.getShort();
        if (len < 0 || len > b.remaining()) {
            throw new IllegalArgumentException("bad " + what + " length " + len + " in __transaction_state record");
        }
        ByteBuffer slice = b.slice(b.position(), len);
        b.position(b.position() + len);
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(slice)
                    .toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("invalid UTF-8 " + what + " in __transaction_state record", e);
        }
    }

    private static void end(ByteBuffer b, String what) {
        if (b.hasRemaining()) {
            throw new IllegalArgumentException(b.remaining() + " trailing bytes in __transaction_state " + what);
        }
    }

    private static byte[] utf8(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length > Short.MAX_VALUE) {
            throw new IllegalArgumentException("string of " + b.length + " UTF-8 bytes exceeds 32767");
        }
        return b;
    }
}
