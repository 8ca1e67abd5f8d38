package io.stellflow.broker.topic;

/**
 * Topic name rules: non-empty, at most {@value #MAX_LENGTH} characters, only {@code [a-zA-Z0-9._-]},
 * and not {@code .} or {@code ..} (those would be directory names with a special meaning).
 *
 * <p>Thread-safety: stateless.
 */
public final class TopicNames {
    /** Longest topic name in characters; leaves room for {@code -<partition>} in a 255-byte file name. */
    public static final int MAX_LENGTH = 249;

    private TopicNames() {}

    /** Whether {@code name} is a legal topic name (null is not). */
    public static boolean isValid(String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_LENGTH) {
            return false;
        }
        if (name.equals(".") || name.equals("..")) {
            return false;
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
                return false;
            }
        }
        return true;
    }
}
