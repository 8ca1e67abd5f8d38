package io.stellflow.broker.group;

import io.stellflow.broker.coordinator.CoordinatorRecord;
import java.io.ByteArrayOutputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;

/**
 * The record layouts of {@code __consumer_offsets}. Every record's key starts with an int16 record
 * type, then the key fields; every value starts with an int16 value version (0 for all types
 * today), then the value fields; a null value is a tombstone (the key's state is deleted, and
 * compaction removes the key). Compaction keeps the last record per key, so a key names exactly one
 * piece of state.
 *
 * <p>Primitive encodings, all big-endian: {@code int16}, {@code int32}, {@code int64}; {@code
 * string} = int16 length then that many UTF-8 bytes, length -1 for null ({@code nstring}); {@code
 * array<X>} = int32 count then the entries; {@code partitions} = {@code array<topic string,
 * array<int32>>} (a topic and its partition numbers, in topic then partition order).
 *
 * <pre>
 * type 0  OFFSET_COMMIT   key:   int16 0 | string group | string topic | int32 partition
 *                         value: int16 0 | int64 offset | int32 leaderEpoch (-1 none)
 *                                | nstring metadata | int64 commitTimestampMs
 * type 1  CLASSIC_GROUP   key:   int16 1 | string group
 *                         value: int16 0 | int32 generation | nstring leaderId
 *                                | int64 emptySinceMs (-1 while it has members)
 *                                | array&lt;string memberId | string clientId | string clientHost
 *                                        | int32 sessionTimeoutMs&gt; (join order)
 * type 2  CONSUMER_GROUP  key:   int16 2 | string group
 *                         value: int16 0 | int32 groupEpoch | string assignor | int64 emptySinceMs
 * type 3  MEMBER          key:   int16 3 | string group | string memberId
 *                         value: int16 0 | nstring instanceId | nstring rackId | string clientId
 *                                | string clientHost | nstring serverAssignor
 *                                | array&lt;string&gt; subscribedTopics | int32 rebalanceTimeoutMs
 *                                | int32 memberEpoch (-2: static member left, kept)
 *                                | int32 previousMemberEpoch | partitions assigned
 *                                | partitions pendingRevocation
 * type 4  TARGET_MEMBER   key:   int16 4 | string group | string memberId
 *                         value: int16 0 | partitions target
 * type 5  TARGET_EPOCH    key:   int16 5 | string group
 *                         value: int16 0 | int32 assignmentEpoch
 * type 6  OFFSET_JOURNAL  key:   int16 6 | string group | int32 slot (seq mod offsetHistorySlots)
 *                         value: int16 0 | int64 seq | int64 timestampMs | string principal
 *                                | string clientId | nstring memberId | string topic
 *                                | int32 partition | int64 oldOffset (-1 none)
 *                                | int64 newOffset (-1 deleted) | string source
 * </pre>
 *
 * <p>Worked example: group "g" commits offset 5 of topic "t" partition 0 at time 1000, no leader
 * epoch, metadata "":
 *
 * <pre>
 * key   00 00 | 00 01 67 | 00 01 74 | 00 00 00 00
 * value 00 00 | 00 00 00 00 00 00 00 05 | ff ff ff ff | 00 00 | 00 00 00 00 00 00 03 e8
 * </pre>
 *
 * <p>The offset journal is a ring: entry {@code seq} goes to slot {@code seq mod N}, so a group
 * never holds more than N journal keys after compaction and the newest N changes survive.
 *
 * <p>Decoding is strict: a short buffer, trailing bytes, a negative length, invalid UTF-8, an
 * unknown type or an unknown value version throws {@link IllegalArgumentException} (the runtime
 * logs and skips such a record, e.g. one written by a newer broker). Thread-safety: stateless.
 */
public final class GroupRecords {
    public static final short OFFSET_COMMIT = 0;
    public static final short CLASSIC_GROUP = 1;
    public static final short CONSUMER_GROUP = 2;
    public static final short MEMBER = 3;
    public static final short TARGET_MEMBER = 4;
    public static final short TARGET_EPOCH = 5;
    public static final short OFFSET_JOURNAL = 6;

    /** The only value version written and read today. */
    public static final short VALUE_VERSION = 0;

    private GroupRecords() {}

    /** A committed offset. */
    public record OffsetValue(long offset, int leaderEpoch, String metadata, long commitTimestampMs) {}

    /** One classic member as stored (the session deadline is not stored: it restarts on load). */
    public record ClassicMemberValue(String memberId, String clientId, String clientHost, int sessionTimeoutMs) {}

    /** A classic group's generation and members. */
    public record ClassicGroupValue(
            int generation, String leaderId, long emptySinceMs, List<ClassicMemberValue> members) {
        public ClassicGroupValue {
            members = List.copyOf(members);
        }
    }

    /** A consumer group's epoch and assignor. */
    public record ConsumerGroupValue(int groupEpoch, String assignor, long emptySinceMs) {}

    /** One member of our protocol as stored. */
    public record MemberValue(
            String instanceId,
            String rackId,
            String clientId,
            String clientHost,
            String serverAssignor,
            List<String> subscribedTopics,
            int rebalanceTimeoutMs,
            int memberEpoch,
            int previousMemberEpoch,
            Assignment assigned,
            Assignment pendingRevocation) {
        public MemberValue {
            subscribedTopics = List.copyOf(subscribedTopics);
        }
    }

    /** One offset change of the journal ({@code --describe --history}). */
    public record JournalEntry(
            long seq,
            long timestampMs,
            String principal,
            String clientId,
            String memberId,
            String topic,
            int partition,
            long oldOffset,
            long newOffset,
            String source) {}

    /** A decoded record: the key's fields and the value, null for a tombstone. */
    public sealed interface Decoded {
        String group();
    }

    public record OffsetRecord(String group, String topic, int partition, OffsetValue value) implements Decoded {}

    public record ClassicGroupRecord(String group, ClassicGroupValue value) implements Decoded {}

    public record ConsumerGroupRecord(String group, ConsumerGroupValue value) implements Decoded {}

    public record MemberRecord(String group, String memberId, MemberValue value) implements Decoded {}

    public record TargetMemberRecord(String group, String memberId, Assignment value) implements Decoded {}

    public record TargetEpochRecord(String group, Integer value) implements Decoded {}

    public record JournalRecord(String group, int slot, JournalEntry value) implements Decoded {}

    // ---- encoding

    public static CoordinatorRecord offset(String group, String topic, int partition, OffsetValue v) {
        byte[] key = new Out()
                .i16(OFFSET_COMMIT)
                .str(group)
                .str(topic)
                .i32(partition)
                .bytes();
        if (v == null) {
            return new CoordinatorRecord(key, null);
        }
        Out o = new Out().i16(VALUE_VERSION).i64(v.offset()).i32(v.leaderEpoch());
        return new CoordinatorRecord(
                key, o.str(v.metadata()).i64(v.commitTimestampMs()).bytes());
    }

    public static CoordinatorRecord classicGroup(String group, ClassicGroupValue v) {
        byte[] key = new Out().i16(CLASSIC_GROUP).str(group).bytes();
        if (v == null) {
            return new CoordinatorRecord(key, null);
        }
        Out o = new Out()
                .i16(VALUE_VERSION)
                .i32(v.generation())
                .str(v.leaderId())
                .i64(v.emptySinceMs());
        o.i32(v.members().size());
        for (ClassicMemberValue m : v.members()) {
            o.str(m.memberId()).str(m.clientId()).str(m.clientHost()).i32(m.sessionTimeoutMs());
        }
        return new CoordinatorRecord(key, o.bytes());
    }

    public static CoordinatorRecord consumerGroup(String group, ConsumerGroupValue v) {
        byte[] key = new Out().i16(CONSUMER_GROUP).str(group).bytes();
        if (v == null) {
            return new CoordinatorRecord(key, null);
        }
        return new CoordinatorRecord(
                key,
                new Out()
                        .i16(VALUE_VERSION)
                        .i32(v.groupEpoch())
                        .str(v.assignor())
                        .i64(v.emptySinceMs())
                        .bytes());
    }

    public static CoordinatorRecord member(String group, String memberId, MemberValue v) {
        byte[] key = new Out().i16(MEMBER).str(group).str(memberId).bytes();
        if (v == null) {
            return new CoordinatorRecord(key, null);
        }
        Out o = new Out().i16(VALUE_VERSION).str(v.instanceId()).str(v.rackId()).str(v.clientId());
        o.str(v.clientHost()).str(v.serverAssignor()).i32(v.subscribedTopics().size());
        for (String t : v.subscribedTopics()) {
            o.str(t);
        }
        o.i32(v.rebalanceTimeoutMs()).i32(v.memberEpoch()).i32(v.previousMemberEpoch());
        o.partitions(v.assigned()).partitions(v.pendingRevocation());
        return new CoordinatorRecord(key, o.bytes());
    }

    public static CoordinatorRecord targetMember(String group, String memberId, Assignment target) {
        byte[] key = new Out().i16(TARGET_MEMBER).str(group).str(memberId).bytes();
        if (target == null) {
            return new CoordinatorRecord(key, null);
        }
        return new CoordinatorRecord(
                key, new Out().i16(VALUE_VERSION).partitions(target).bytes());
    }

    public static CoordinatorRecord targetEpoch(String group, Integer assignmentEpoch) {
        byte[] key = new Out().i16(TARGET_EPOCH).str(group).bytes();
        if (assignmentEpoch == null) {
            return new CoordinatorRecord(key, null);
        }
        return new CoordinatorRecord(
                key, new Out().i16(VALUE_VERSION).i32(assignmentEpoch).bytes());
    }

    public static CoordinatorRecord journal(String group, int slot, JournalEntry e) {
        byte[] key = new Out().i16(OFFSET_JOURNAL).str(group).i32(slot).bytes();
        if (e == null) {
            return new CoordinatorRecord(key, null);
        }
        Out o = new Out().i16(VALUE_VERSION).i64(e.seq()).i64(e.timestampMs()).str(e.principal());
        o.str(e.clientId()).str(e.memberId()).str(e.topic()).i32(e.partition());
        o.i64(e.oldOffset()).i64(e.newOffset()).str(e.source());
        return new CoordinatorRecord(key, o.bytes());
    }

    // ---- decoding

    /**
     * Decodes one record.
     *
     * @throws IllegalArgumentException for an unknown type or version, or a malformed key or value
     */
    public static Decoded decode(byte[] key, byte[] value) {
        In k = new In(key, "key");
        short type = k.i16();
        In v = value == null ? null : new In(value, "value");
        if (v != null) {
            short version = v.i16();
            if (version != VALUE_VERSION) {
                throw new IllegalArgumentException("unknown value version " + version + " of record type " + type);
            }
        }
        Decoded d = switch (type) {
            case OFFSET_COMMIT -> {
                String g = k.str();
                String t = k.str();
                int p = k.i32();
                OffsetValue ov = v == null ? null : new OffsetValue(v.i64(), v.i32(), v.nstr(), v.i64());
                yield new OffsetRecord(g, t, p, ov);
            }
            case CLASSIC_GROUP -> new ClassicGroupRecord(k.str(), v == null ? null : classicValue(v));
            case CONSUMER_GROUP ->
                new ConsumerGroupRecord(k.str(), v == null ? null : new ConsumerGroupValue(v.i32(), v.str(), v.i64()));
            case MEMBER -> new MemberRecord(k.str(), k.str(), v == null ? null : memberValue(v));
            case TARGET_MEMBER -> new TargetMemberRecord(k.str(), k.str(), v == null ? null : v.partitions());
            case TARGET_EPOCH -> new TargetEpochRecord(k.str(), v == null ? null : v.i32());
            case OFFSET_JOURNAL -> {
                String g = k.str();
                int slot = k.i32();
                JournalEntry e = v == null
                        ? null
                        : new JournalEntry(
                                v.i64(), v.i64(), v.str(), v.str(), v.nstr(), v.str(), v.i32(), v.i64(), v.i64(),
                                v.str());
                yield new JournalRecord(g, slot, e);
            }
            default -> throw new IllegalArgumentException("unknown __consumer_offsets record type " + type);
        };
        k.end();
        if (v != null) {
            v.end();
        }
        return d;
    }

    private static ClassicGroupValue classicValue(In v) {
        int generation = v.i32();
        String leader = v.nstr();
        long emptySince = v.i64();
        int n = v.count();
        List<ClassicMemberValue> members = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            members.add(new ClassicMemberValue(v.str(), v.str(), v.str(), v.i32()));
        }
        return new ClassicGroupValue(generation, leader, emptySince, members);
    }

    private static MemberValue memberValue(In v) {
        String instanceId = v.nstr();
        String rackId = v.nstr();
        String clientId = v.str();
        String clientHost = v.str();
        String assignor = v.nstr();
        int n = v.count();
        List<String> topics = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            topics.add(v.str());
        }
        return new MemberValue(
                instanceId,
                rackId,
                clientId,
                clientHost,
                assignor,
                topics,
                v.i32(),
                v.i32(),
                v.i32(),
                v.partitions(),
                v.partitions());
    }

    /** Big-endian writer of the primitive encodings above. */
    private static final class Out {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream(64);

        Out i16(int v) {
            out.write(v >>> 8);
            out.write(v);
            return this;
        }

        Out i32(int v) {
            i16(v >>> 16);
            return i16(v);
        }

        Out i64(long v) {
            i32((int) (v >>> 32));
            return i32((int) v);
        }

        Out str(String s) {
            if (s == null) {
                return i16(-1);
            }
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            if (b.length > Short.MAX_VALUE) {
                throw new IllegalArgumentException("string of " + b.length + " UTF-8 bytes exceeds 32767");
            }
            i16(b.length);
            out.writeBytes(b);
            return this;
        }

        Out partitions(Assignment a) {
            Map<String, SortedSet<Integer>> byTopic = a.byTopic();
            i32(byTopic.size());
            byTopic.forEach((t, ps) -> {
                str(t);
                i32(ps.size());
                for (int p : ps) {
                    i32(p);
                }
            });
            return this;
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }

    /** Strict reader: any short read, negative length or bad UTF-8 is an IllegalArgumentException. */
    private static final class In {
        private final ByteBuffer buf;
        private final String what;

        In(byte[] bytes, String what) {
            this.buf = ByteBuffer.wrap(bytes);
            this.what = what;
        }

        short i16() {
            try {
                return buf.getShort();
            } catch (BufferUnderflowException e) {
                throw truncated();
            }
        }

        int i32() {
            try {
                return buf.getInt();
            } catch (BufferUnderflowException e) {
                throw truncated();
            }
        }

        long i64() {
            try {
                return buf.getLong();
            } catch (BufferUnderflowException e) {
                throw truncated();
            }
        }

        int count() {
            int n = i32();
            if (n < 0 || n > buf.remaining()) {
                throw new IllegalArgumentException("bad array count " + n + " in record " + what);
            }
            return n;
        }

        String nstr() {
            int len = i16();
            if (len == -1) {
                return null;
            }
            if (len < 0 || len > buf.remaining()) {
                throw new IllegalArgumentException("bad string length " + len + " in record " + what);
            }
            ByteBuffer slice = buf.slice(buf.position(), len);
            buf.position(buf.position() + len);
            try {
                return StandardCharsets.UTF_8
                        .newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(slice)
                        .toString();
            } catch (CharacterCodingException e) {
                throw new IllegalArgumentException("invalid UTF-8 in record " + what, e);
            }
        }

        String str() {
            String s = nstr();
            if (s == null) {
                throw new IllegalArgumentException("null string where one is required in record " + what);
            }
            return s;
        }

        Assignment partitions() {
            int topics = count();
            TreeMap<String, List<Integer>> m = new TreeMap<>();
            for (int i = 0; i < topics; i++) {
                String t = str();
                int n = count();
                List<Integer> ps = new ArrayList<>(n);
                for (int j = 0; j < n; j++) {
                    ps.add(i32());
                }
                m.put(t, ps);
            }
            return Assignment.of(m);
        }

        void end() {
            if (buf.hasRemaining()) {
                throw new IllegalArgumentException(buf.remaining() + " trailing bytes in record " + what);
            }
        }

        private IllegalArgumentException truncated() {
            return new IllegalArgumentException("truncated record " + what);
        }
    }
}
