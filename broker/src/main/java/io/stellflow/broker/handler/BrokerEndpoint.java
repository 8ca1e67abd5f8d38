package io.stellflow.broker.handler;

/**
 * What this broker tells clients about itself in Metadata.
 *
 * <p>Thread-safety: immutable.
 *
 * @param brokerId {@code broker.id}
 * @param host advertised host, never null or empty
 * @param port advertised port (the bound port when the listener asked for port 0)
 * @param clusterId the persisted cluster id
 */
public record BrokerEndpoint(int brokerId, String host, int port, String clusterId) {}
