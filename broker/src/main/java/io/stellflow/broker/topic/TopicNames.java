package io.stellflow.broker.topic;

/**
 * Topic name rules for the broker's local paths (metadata.local, auto-creation): the controller's
 * rules in {@link io.stellflow.controller.image.TopicNames}, one definition for both: non-empty, at
 * most {@value #MAX_LENGTH} characters, only {@code [a-zA-Z0-9._-]}, not {@code .} or {@code ..}.
 *
 * <p>Thread-safety: stateless.
 */
public final class TopicNames {
    /** Longest topic name in characters; leaves room for {@code -<partition>} in a 255-byte file name. */
    public static final int MAX_LENGTH = io.stellflow.controller.image.TopicNames.MAX_LENGTH;

    private TopicNames() {}

    /** Whether {@code name} is a legal topic name (null is not). */
    public static boolean isValid(String name) {
        return io.stellflow.controller.image.TopicNames.validate(name) == null;
    }
}
