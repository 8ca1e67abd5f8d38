package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.config.BrokerConfig;
import io.stellflow.broker.config.EffectiveBrokerConfig;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.protocol.message.DescribeBrokerConfigsRequest;
import io.stellflow.protocol.message.DescribeBrokerConfigsResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * DescribeBrokerConfigs (apiKey 28, {@code docs/protocol-additions.md}): this broker's effective
 * static configuration ({@link EffectiveBrokerConfig}), sorted by key; with keys in the request only
 * those (a key it does not report is left out, not an error). Static only: the broker has no dynamic
 * configuration, so what it answers is what it started with.
 *
 * <p>Thread-safety: immutable after construction; the entries are computed once.
 */
public final class DescribeBrokerConfigsHandler implements ApiHandler {
    private final int brokerId;
    private final List<DescribeBrokerConfigsResponse.Entry> all;

    /** @param config this broker's configuration */
    public DescribeBrokerConfigsHandler(BrokerConfig config) {
        this.brokerId = config.brokerId();
        List<DescribeBrokerConfigsResponse.Entry> entries = new ArrayList<>();
        for (EffectiveBrokerConfig.Entry e : EffectiveBrokerConfig.of(config)) {
            entries.add(new DescribeBrokerConfigsResponse.Entry(
                    e.key(),
                    e.value(),
                    e.given()
                            ? DescribeBrokerConfigsResponse.SOURCE_STATIC
                            : DescribeBrokerConfigsResponse.SOURCE_DEFAULT));
        }
        this.all = List.copyOf(entries);
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        DescribeBrokerConfigsRequest request = DescribeBrokerConfigsRequest.read(body);
        List<DescribeBrokerConfigsResponse.Entry> out = all;
        if (request.keys() != null) {
            Set<String> keys = new HashSet<>(request.keys());
            out = all.stream().filter(e -> keys.contains(e.key())).toList();
        }
        context.respond(new DescribeBrokerConfigsResponse(brokerId, out));
    }
}
