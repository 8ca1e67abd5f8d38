package io.stellflow.broker.topic;

import io.stellflow.server.common.file.AtomicFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The log directory's identity file {@code meta.properties}: which broker and which cluster the data
 * belongs to. A broker {@link #read}s the file, registers with the id it names (or {@code
 * cluster.id}; none for a new broker) and {@link #create}s it with the cluster's id from the
 * controller when it was absent.
 *
 * <p>Thread-safety: immutable.
 *
 * @param brokerId the broker id stored with the data
 * @param clusterId the cluster id
 */
public record BrokerMetadata(int brokerId, String clusterId) {

    /** File name inside the log directory. */
    public static final String FILE_NAME = "meta.properties";

    /**
     * Reads {@code meta.properties}, or returns null when the directory has none yet.
     *
     * @param configuredClusterId {@code cluster.id}, or null
     * @throws IOException when the file cannot be read, or names another broker or cluster than the
     *     configuration
     */
    public static BrokerMetadata read(Path logDir, int brokerId, String configuredClusterId) throws IOException {
        Path file = logDir.resolve(FILE_NAME);
        if (Files.exists(file)) {
            Properties props = AtomicFiles.readProperties(file);
            String storedCluster = props.getProperty("cluster.id");
            String storedBroker = props.getProperty("broker.id");
            if (storedCluster == null || storedBroker == null) {
                throw new IOException("Corrupt " + file + ": missing cluster.id or broker.id");
            }
            if (!storedBroker.equals(Integer.toString(brokerId))) {
                throw new IOException("Log directory " + logDir + " belongs to broker.id " + storedBroker
                        + ", but broker.id is " + brokerId);
            }
            if (configuredClusterId != null && !configuredClusterId.equals(storedCluster)) {
                throw new IOException("Log directory " + logDir + " belongs to cluster.id " + storedCluster
                        + ", but cluster.id is " + configuredClusterId);
            }
            return new BrokerMetadata(brokerId, storedCluster);
        }
        return null;
    }

    /**
     * Writes {@code meta.properties} (atomically: temp file, fsync, rename) for {@code clusterId}.
     *
     * @throws IOException when it cannot be written
     */
    public static BrokerMetadata create(Path logDir, int brokerId, String clusterId) throws IOException {
        Path file = logDir.resolve(FILE_NAME);
        Properties props = new Properties();
        props.setProperty("version", "1");
        props.setProperty("broker.id", Integer.toString(brokerId));
        props.setProperty("cluster.id", clusterId);
        AtomicFiles.writeProperties(file, props, "Stellflow broker metadata");
        return new BrokerMetadata(brokerId, clusterId);
    }
}
