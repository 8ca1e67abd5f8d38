/**
 * Follower side of replication (issue #6): the {@link io.stellflow.broker.replication.ReplicaFetcherManager}
 * keeps one {@link io.stellflow.broker.replication.ReplicaFetcher} per leader broker carrying every
 * partition this broker follows from it; a fetcher reconciles each partition's log with the leader by
 * leader epoch ({@link io.stellflow.broker.replication.FollowerTruncation}) and then copies the
 * leader's batches with Fetch v1 ({@link io.stellflow.broker.replication.FollowerAppend}).
 */
package io.stellflow.broker.replication;
