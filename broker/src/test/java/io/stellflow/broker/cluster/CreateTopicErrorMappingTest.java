package io.stellflow.broker.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.protocol.Errors;
import org.junit.jupiter.api.Test;

/** The controller's CreateTopics refusals on the wire: specific codes from v2, the v0 fallback before. */
class CreateTopicErrorMappingTest {
    @Test
    void v2GetsTheSpecificCodeV0AndV1GetInvalidRequest() {
        ErrorCode[] controller = {
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            ErrorCode.TOPIC_ALREADY_EXISTS,
            ErrorCode.INVALID_PARTITIONS,
            ErrorCode.INVALID_REPLICATION_FACTOR,
            ErrorCode.INVALID_CONFIG
        };
        short[] v2 = {
            Errors.INVALID_TOPIC,
            Errors.TOPIC_ALREADY_EXISTS,
            Errors.INVALID_PARTITIONS,
            Errors.INVALID_REPLICATION_FACTOR,
            Errors.INVALID_REQUEST
        };
        for (int i = 0; i < controller.length; i++) {
            assertThat(TopicForwardingHandler.createError(controller[i], (short) 2))
                    .isEqualTo(v2[i]);
            for (short old = 0; old < 2; old++) {
                short code = TopicForwardingHandler.createError(controller[i], old);
                assertThat(code).isEqualTo(Errors.INVALID_REQUEST).isLessThanOrEqualTo(Errors.MAX_DOCUMENTED);
            }
        }
    }
}
