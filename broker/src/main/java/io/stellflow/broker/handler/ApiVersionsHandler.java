package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.protocol.message.ApiVersionsRequest;
import io.stellflow.protocol.message.ApiVersionsResponse;
import io.stellflow.protocol.message.ApiVersionsResponse.ApiVersionRange;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * ApiVersions (apiKey 0, {@code docs/spec/wire-protocol.md} §6.1): lists exactly the implemented
 * APIs, each at [0, its handler's max version] (Produce and Fetch [0, 1], the rest [0, 0]), and the
 * features that work. The response is built once.
 *
 * <p>Thread-safety: immutable.
 */
public final class ApiVersionsHandler implements ApiHandler {
    /** Name reported in {@code brokerSoftwareName}. */
    public static final String SOFTWARE_NAME = "stellflow-broker";

    /**
     * Features that really work in this broker: long-poll Fetch (decision 9.e of {@code
     * docs/spec/wire-protocol.md}), Produce of batches compressed with each codec of decision 9.o
     * (validated by streaming decompression, stored as produced) and idempotent producers
     * (InitProducerId with a null transactionalId, sequence-checked Produce: §6.12).
     */
    public static final List<String> FEATURES = List.of(
            "fetch.long_poll",
            "compression.gzip",
            "compression.snappy",
            "compression.lz4",
            "compression.zstd",
            "producer.idempotence");

    private final ApiVersionsResponse response;

    /** @param apiKeys the implemented API keys, in the order to list them, each at [0, 0] */
    public ApiVersionsHandler(List<Short> apiKeys) {
        this(apiKeys, Map.of());
    }

    /**
     * @param apiKeys the implemented API keys, in the order to list them
     * @param maxVersions the highest version per key when above 0 (Fetch: 1)
     */
    public ApiVersionsHandler(List<Short> apiKeys, Map<Short, Short> maxVersions) {
        List<ApiVersionRange> ranges = new ArrayList<>(apiKeys.size());
        for (short key : apiKeys) {
            ranges.add(new ApiVersionRange(key, (short) 0, maxVersions.getOrDefault(key, (short) 0)));
        }
        response = new ApiVersionsResponse(ranges, SOFTWARE_NAME, softwareVersion(), FEATURES);
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        ApiVersionsRequest.read(body);
        context.respond(response);
    }

    /** The broker jar's Implementation-Version, or {@code dev} when run from classes. */
    public static String softwareVersion() {
        String version = ApiVersionsHandler.class.getPackage().getImplementationVersion();
        return version != null ? version : "dev";
    }
}
