package io.stellflow.controller.image;

import io.stellflow.controller.proto.Endpoint;
import java.util.Objects;

/**
 * A named listener endpoint ({@code PLAINTEXT://host:port} in Kafka notation).
 *
 * @param name listener name, for example {@code PLAINTEXT}
 * @param host host name or IP literal
 * @param port TCP port, 0..65535
 */
public record BrokerEndpoint(String name, String host, int port) {
    public BrokerEndpoint {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(host, "host");
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
    }

    public static BrokerEndpoint fromProto(Endpoint e) {
        return new BrokerEndpoint(e.getName(), e.getHost(), e.getPort());
    }

    public Endpoint toProto() {
        return Endpoint.newBuilder().setName(name).setHost(host).setPort(port).build();
    }

    /** {@code host:port}. */
    public String hostPort() {
        return host + ":" + port;
    }
}
