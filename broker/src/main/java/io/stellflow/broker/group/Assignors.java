package io.stellflow.broker.group;

import java.util.List;

/** The server assignors a member may name ("uniform", "range"). Thread-safety: immutable. */
final class Assignors {
    static final List<String> NAMES = List.of(UniformAssignor.NAME, RangeAssignor.NAME);

    private static final PartitionAssignor UNIFORM = new UniformAssignor();
    private static final PartitionAssignor RANGE = new RangeAssignor();

    private Assignors() {}

    static boolean isKnown(String name) {
        return NAMES.contains(name);
    }

    /** The assignor of that name; IllegalArgumentException for an unknown one (check {@link #isKnown}). */
    static PartitionAssignor get(String name) {
        return switch (name) {
            case UniformAssignor.NAME -> UNIFORM;
            case RangeAssignor.NAME -> RANGE;
            default -> throw new IllegalArgumentException("unknown assignor " + name);
        };
    }
}
