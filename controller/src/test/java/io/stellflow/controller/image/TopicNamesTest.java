package io.stellflow.controller.image;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TopicNamesTest {
    @Test
    void acceptsLegalNames() {
        assertThat(TopicNames.validate("orders")).isNull();
        assertThat(TopicNames.validate("a.b_c-D9")).isNull();
        assertThat(TopicNames.validate("...")).isNull();
        assertThat(TopicNames.validate(".topics")).isNull();
        assertThat(TopicNames.validate("x".repeat(249))).isNull();
    }

    @Test
    void rejectsIllegalNames() {
        assertThat(TopicNames.validate(null)).isNotNull();
        assertThat(TopicNames.validate("")).isNotNull();
        assertThat(TopicNames.validate(".")).isNotNull();
        assertThat(TopicNames.validate("..")).isNotNull();
        assertThat(TopicNames.validate("x".repeat(250))).contains("250 characters");
        assertThat(TopicNames.validate("a b")).contains("index 1");
        assertThat(TopicNames.validate("a/b")).isNotNull();
        assertThat(TopicNames.validate("é")).isNotNull();
        assertThat(TopicNames.validate("a:b")).isNotNull();
    }

    @Test
    void namesCollideWhenEqualWithDotsAsUnderscores() {
        assertThat(TopicNames.collisionKey("a.b")).isEqualTo(TopicNames.collisionKey("a_b"));
        assertThat(TopicNames.collisionKey("a.b")).isNotEqualTo(TopicNames.collisionKey("a-b"));
    }
}
