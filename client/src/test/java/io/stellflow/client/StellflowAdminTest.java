package io.stellflow.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.protocol.Errors;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class StellflowAdminTest {
    @Test
    void createsListsAndDescribesTopics() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", broker.bootstrap());
            try (StellflowAdmin admin = new StellflowAdmin(p)) {
                admin.createTopic("b", 2);
                admin.createTopic("a", 1);
                assertThat(admin.listTopics()).containsExactly("a", "b");
                TopicDescription d = admin.describeTopics(List.of("b", "zz")).get("b");
                assertThat(d.partitions()).extracting(PartitionInfo::partition).containsExactly(0, 1);
                assertThat(admin.describeTopics(List.of("zz")).get("zz").errorCode())
                        .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION);
                assertThat(admin.listOffsets(new TopicPartition("a", 0), StellflowAdmin.LATEST))
                        .isZero();
            }
        }
    }

    /** CreateTopic went to the first bootstrap server only: a dead one there failed it every time. */
    @Test
    void createTopicPassesOverABootstrapServerThatRefusesTheConnection() throws Exception {
        try (FakeBroker broker = new FakeBroker()) {
            Properties p = new Properties();
            p.setProperty("bootstrap.servers", "127.0.0.1:1," + broker.bootstrap());
            for (int i = 0; i < 4; i++) {
                try (StellflowAdmin admin = new StellflowAdmin(p)) { // fresh: only the bootstrap list known
                    admin.createTopic("t" + i, 1);
                    assertThat(admin.listTopics()).contains("t" + i);
                }
            }
        }
    }
}
