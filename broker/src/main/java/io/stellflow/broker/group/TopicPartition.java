package io.stellflow.broker.group;

/** One partition of a topic, as a map key of the group state. Immutable. */
record TopicPartition(String topic, int partition) {}
