package io.stellflow.server.common.topic;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TopicNamesTest {
    @Test
    void theCoordinatorTopicsAreInternalAndNoOtherIs() {
        assertThat(TopicNames.isInternal("__consumer_offsets")).isTrue();
        assertThat(TopicNames.isInternal("__transaction_state")).isTrue();
        assertThat(TopicNames.isInternal("__other")).isFalse();
        assertThat(TopicNames.isInternal("orders")).isFalse();
    }

    @Test
    void acceptsLegalNames() {
        assertThat(TopicNames.isValid("orders")).isTrue();
        assertThat(TopicNames.isValid("a.b_c-D9")).isTrue();
        assertThat(TopicNames.isValid("...")).isTrue();
        assertThat(TopicNames.isValid(".topics")).isTrue();
        assertThat(TopicNames.isValid("x".repeat(249))).isTrue();
    }

    @Test
    void rejectsIllegalNames() {
        assertThat(TopicNames.isValid(null)).isFalse();
        assertThat(TopicNames.isValid("")).isFalse();
        assertThat(TopicNames.isValid(".")).isFalse();
        assertThat(TopicNames.isValid("..")).isFalse();
        assertThat(TopicNames.isValid("x".repeat(250))).isFalse();
        assertThat(TopicNames.isValid("a b")).isFalse();
        assertThat(TopicNames.isValid("a/b")).isFalse();
        assertThat(TopicNames.isValid("é")).isFalse();
        assertThat(TopicNames.isValid("a:b")).isFalse();
    }

    @Test
    void theReasonNamesTheFaultAndNamesCollideWhenDotsAndUnderscoresAreTreatedAlike() {
        assertThat(TopicNames.validate("orders")).isNull();
        assertThat(TopicNames.validate("")).isEqualTo("topic name is empty");
        assertThat(TopicNames.validate("x".repeat(250))).contains("250 characters long");
        assertThat(TopicNames.validate("a b")).contains("illegal character at index 1");
        assertThat(TopicNames.collisionKey("a.b_c")).isEqualTo(TopicNames.collisionKey("a_b.c"));
    }
}
