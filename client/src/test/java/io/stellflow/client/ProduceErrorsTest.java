package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the errors of {@link ProduceErrors} say about a part of a split batch: a part never sent is
 * in no partition unless an earlier attempt of its whole batch got no answer, and then its message
 * must not read as "not stored".
 */
class ProduceErrorsTest {
    private static final TopicPartition TP = new TopicPartition("t", 0);
    private final ProducerBatch half =
            new ProducerBatch(TP, UnpooledByteBufAllocator.DEFAULT, 1 << 12, 1.0, 40, 1000, 0, 0);

    @AfterEach
    void release() {
        half.release();
    }

    private static ProducerConfig config() {
        Properties p = new Properties();
        p.setProperty("bootstrap.servers", "127.0.0.1:1");
        return ProducerConfig.from(p);
    }

    @Test
    void aPartOfABatchThatGotNoAnswerSaysItsRecordsMayBeStored() {
        half.splitDepth = 1;
        half.partOfMaybeAppended = true;

        StellflowException expired = ProduceErrors.deliveryTimeout(half, config());
        assertThat(expired.getMessage())
                .contains("this part was not sent yet")
                .contains("an earlier attempt of its whole batch got no answer: its records may be stored");
        assertThat(expired.errorCode()).isEqualTo(StellflowException.NETWORK_ERROR);

        StellflowException closed = ProduceErrors.closedForcefully(half, false);
        assertThat(closed.getMessage())
                .contains("before this part was sent")
                .contains("its records may be stored")
                .doesNotContain("never sent");
    }

    @Test
    void aPartOfABatchThatWasOnlyRefusedSaysItWasNeverSent() {
        half.splitDepth = 1;

        assertThat(ProduceErrors.deliveryTimeout(half, config()).getMessage())
                .contains("this part was not sent yet")
                .doesNotContain("may be stored");
        assertThat(ProduceErrors.closedForcefully(half, false).getMessage())
                .contains("the batch was never sent")
                .doesNotContain("may be stored");
    }
}
