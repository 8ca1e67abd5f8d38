package io.stellflow.server.common.topic;

/**
 * Topic name rules, the one definition for the controller (CreateTopics, metadata records) and the
 * broker (auto-creation, its local paths): non-empty, at most {@value #MAX_LENGTH} characters, only
 * {@code [a-zA-Z0-9._-]}, not {@code .} or {@code ..}; and two names collide when they are equal
 * once {@code .} and {@code _} are treated alike (metric names would clash).
 *
 * <p>Thread-safety: stateless.
 */
public final class TopicNames {
    /** Longest topic name in characters; leaves room for {@code -<partition>} in a 255-byte file name. */
    public static final int MAX_LENGTH = 249;

    /**
     * The group coordinator's internal topic: committed offsets and group metadata (compacted,
     * created by the broker on the first group request; issue #19).
     */
    public static final String CONSUMER_OFFSETS = "__consumer_offsets";

    /**
     * The transaction coordinator's internal topic: one record per transactional id (compacted,
     * created by the broker on the first transactional InitProducerId; issue #20).
     */
    public static final String TRANSACTION_STATE = "__transaction_state";

    private TopicNames() {}

    /** Whether {@code name} is a broker-internal topic (Metadata's {@code isInternal}). */
    public static boolean isInternal(String name) {
        return CONSUMER_OFFSETS.equals(name) || TRANSACTION_STATE.equals(name);
    }

    /** Null when {@code name} is legal, otherwise why it is not (for an INVALID_TOPIC_EXCEPTION message). */
    public static String validate(String name) {
        if (name == null || name.isEmpty()) {
            return "topic name is empty";
        }
        if (name.length() > MAX_LENGTH) {
            return "topic name is " + name.length() + " characters long, more than " + MAX_LENGTH;
        }
        if (name.equals(".") || name.equals("..")) {
            return "topic name cannot be '" + name + "'";
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || c == '.'
                    || c == '_'
                    || c == '-';
            if (!ok) {
                return "topic name '" + name + "' has an illegal character at index " + i
                        + " (allowed: a-z A-Z 0-9 . _ -)";
            }
        }
        return null;
    }

    /** Whether {@code name} is a legal topic name (null is not). */
    public static boolean isValid(String name) {
        return validate(name) == null;
    }

    /** The key under which names collide: {@code .} replaced by {@code _}. */
    public static String collisionKey(String name) {
        return name.replace('.', '_');
    }
}
