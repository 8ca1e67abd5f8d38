package io.stellflow.broker.coordinator;

/**
 * Makes the empty shard of one coordinator partition when this broker becomes its leader (the
 * runtime then loads it from the partition's log). Called on the runtime thread that will own the
 * shard.
 *
 * @param <S> the shard type (for groups: {@code io.stellflow.broker.group.GroupShard})
 */
@FunctionalInterface
public interface CoordinatorShardFactory<S extends CoordinatorShard> {
    /**
     * @param partition the partition index of the coordinator topic
     * @return a new, empty shard; never null
     */
    S create(int partition);

    /**
     * As {@link #create(int)}, for a shard that needs the leader epoch it was made for (the
     * transaction coordinator stamps it in its markers as the coordinator epoch). The runtime calls
     * this one; by default it ignores the epoch.
     *
     * @param leaderEpoch the partition's leader epoch this broker leads it at
     */
    default S create(int partition, int leaderEpoch) {
        return create(partition);
    }
}
