package io.stellflow.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ErrorsAndApiKeysTest {
    @Test
    void everyDocumentedCodeHasItsSpecName() {
        assertThat(Errors.name(Errors.NONE)).isEqualTo("NONE");
        assertThat(Errors.name(Errors.INVALID_REQUEST)).isEqualTo("INVALID_REQUEST");
        assertThat(Errors.name(Errors.NOT_LEADER_OR_FOLLOWER)).isEqualTo("NOT_LEADER_OR_FOLLOWER");
        assertThat(Errors.name(Errors.INVALID_RECORD)).isEqualTo("INVALID_RECORD");
        assertThat(Errors.name(Errors.CORRUPT_MESSAGE)).isEqualTo("CORRUPT_MESSAGE");
        assertThat(Errors.name(Errors.FEATURE_NOT_ENABLED)).isEqualTo("FEATURE_NOT_ENABLED");
        assertThat(Errors.name(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)).isEqualTo("OUT_OF_ORDER_SEQUENCE_NUMBER");
        assertThat(Errors.name(Errors.PRODUCER_FENCED)).isEqualTo("PRODUCER_FENCED");
        assertThat(Errors.PRODUCER_FENCED).isEqualTo((short) 27);
        assertThat(Errors.MESSAGE_TOO_LARGE).isEqualTo((short) 12);
        assertThat(Errors.RECORD_LIST_TOO_LARGE).isEqualTo((short) 13);
        for (short code = 0; code <= Errors.MAX_DOCUMENTED; code++) {
            assertThat(Errors.name(code)).doesNotStartWith("UNKNOWN(");
        }
    }

    @Test
    void codesOutsideTheTableAreNamedUnknown() {
        assertThat(Errors.name(Errors.INVALID_TOPIC)).isEqualTo("INVALID_TOPIC");
        assertThat(Errors.name((short) 31)).isEqualTo("INVALID_REPLICATION_FACTOR");
        assertThat(Errors.name((short) 32)).isEqualTo("NOT_ENOUGH_REPLICAS");
        assertThat(Errors.name((short) 33)).isEqualTo("NOT_ENOUGH_REPLICAS_AFTER_APPEND");
        assertThat(Errors.name((short) 34)).isEqualTo("REQUEST_TIMED_OUT");
        assertThat(Errors.name((short) 35)).isEqualTo("UNKNOWN(35)");
        assertThat(Errors.name((short) -1)).isEqualTo("UNKNOWN(-1)");
    }

    @Test
    void newCodesFallBackToTheSpecColumnForOlderVersions() {
        assertThat(Errors.v0Fallback(Errors.NOT_ENOUGH_REPLICAS)).isEqualTo(Errors.BROKER_NOT_AVAILABLE);
        assertThat(Errors.v0Fallback(Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND)).isEqualTo(Errors.BROKER_NOT_AVAILABLE);
        assertThat(Errors.v0Fallback(Errors.REQUEST_TIMED_OUT)).isEqualTo(Errors.BROKER_NOT_AVAILABLE);
        assertThat(Errors.v0Fallback(Errors.INVALID_TOPIC)).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(Errors.v0Fallback(Errors.INVALID_REPLICATION_FACTOR)).isEqualTo(Errors.INVALID_REQUEST);
        for (short code = 0; code <= Errors.MAX_DOCUMENTED; code++) {
            assertThat(Errors.v0Fallback(code)).isEqualTo(code);
        }
    }

    @Test
    void apiKeysHaveSpecNumbersAndNames() {
        assertThat(ApiKeys.CREATE_TOPIC).isEqualTo((short) 50);
        assertThat(ApiKeys.name(ApiKeys.PRODUCE)).isEqualTo("Produce");
        assertThat(ApiKeys.name(ApiKeys.CREATE_TOPIC)).isEqualTo("CreateTopic");
        assertThat(ApiKeys.name(ApiKeys.INIT_PRODUCER_ID)).isEqualTo("InitProducerId");
        assertThat(ApiKeys.INIT_PRODUCER_ID).isEqualTo((short) 11);
        assertThat(ApiKeys.name(ApiKeys.BEGIN_TRANSACTION)).isEqualTo("BeginTransaction");
        assertThat(ApiKeys.BEGIN_TRANSACTION).isEqualTo((short) 12);
        assertThat(ApiKeys.name(ApiKeys.END_TRANSACTION)).isEqualTo("EndTransaction");
        assertThat(ApiKeys.END_TRANSACTION).isEqualTo((short) 13);
        assertThat(ApiKeys.name((short) 14)).isEqualTo("Unknown(14)");
        assertThat(ApiKeys.isKnown(ApiKeys.LIST_OFFSETS)).isTrue();
        assertThat(ApiKeys.isKnown(ApiKeys.INIT_PRODUCER_ID)).isTrue();
        assertThat(ApiKeys.isKnown(ApiKeys.END_TRANSACTION)).isTrue();
        assertThat(ApiKeys.isKnown((short) 14)).isFalse();
    }

    @Test
    void groupApiKeysHaveTheSpecNumbersAndOurAdditionsFollowFrom20() {
        short[] keys = {
            ApiKeys.OFFSET_COMMIT,
            ApiKeys.OFFSET_FETCH,
            ApiKeys.FIND_COORDINATOR,
            ApiKeys.HEARTBEAT,
            ApiKeys.JOIN_GROUP,
            ApiKeys.SYNC_GROUP,
            ApiKeys.CONSUMER_GROUP_HEARTBEAT,
            ApiKeys.LIST_GROUPS,
            ApiKeys.DESCRIBE_GROUPS,
            ApiKeys.DELETE_GROUPS,
            ApiKeys.OFFSET_DELETE,
            ApiKeys.OFFSET_HISTORY,
            ApiKeys.DESCRIBE_LOG_DIRS,
            ApiKeys.DELETE_RECORDS,
            ApiKeys.DESCRIBE_BROKER_CONFIGS,
            ApiKeys.REGISTER_TXN_PARTITION,
            ApiKeys.WRITE_TXN_MARKERS,
            ApiKeys.TXN_OFFSET_COMMIT,
            ApiKeys.LIST_TRANSACTIONS,
            ApiKeys.DESCRIBE_TRANSACTIONS,
            ApiKeys.DESCRIBE_PRODUCERS,
            ApiKeys.FORWARD_STATUS
        };
        short[] numbers = {5, 6, 7, 8, 9, 10, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35};
        String[] names = {
            "OffsetCommit",
            "OffsetFetch",
            "FindCoordinator",
            "Heartbeat",
            "JoinGroup",
            "SyncGroup",
            "ConsumerGroupHeartbeat",
            "ListGroups",
            "DescribeGroups",
            "DeleteGroups",
            "OffsetDelete",
            "OffsetHistory",
            "DescribeLogDirs",
            "DeleteRecords",
            "DescribeBrokerConfigs",
            "RegisterTxnPartition",
            "WriteTxnMarkers",
            "TxnOffsetCommit",
            "ListTransactions",
            "DescribeTransactions",
            "DescribeProducers",
            "ForwardStatus"
        };
        for (int i = 0; i < keys.length; i++) {
            assertThat(keys[i]).isEqualTo(numbers[i]);
            assertThat(ApiKeys.name(keys[i])).isEqualTo(names[i]);
            assertThat(ApiKeys.isKnown(keys[i])).as(names[i]).isTrue();
        }
        for (short unallocated : new short[] {14, 19, 36, 49}) {
            assertThat(ApiKeys.isKnown(unallocated)).as("key %d", unallocated).isFalse();
            assertThat(ApiKeys.name(unallocated)).isEqualTo("Unknown(" + unallocated + ")");
        }
    }

    @Test
    void frameLimitsFollowSpecSection1_2() {
        assertThat(Frames.MAX_FRAME_LENGTH).isEqualTo(64 * 1024 * 1024 - 4);
        assertThat(Frames.MIN_REQUEST_PAYLOAD).isEqualTo(28);
        assertThat(Frames.MIN_RESPONSE_PAYLOAD).isEqualTo(12);
    }
}
