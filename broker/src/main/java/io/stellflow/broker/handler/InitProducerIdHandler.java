package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.cluster.ProducerIdBlocks;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;

/**
 * InitProducerId (apiKey 11, {@code docs/spec/wire-protocol.md} §6.12), answered by any broker: a
 * null transactionalId (an idempotent producer) gets a new producer id from this broker's block
 * ({@link ProducerIdBlocks}) and epoch 0; a transactional id gets {@code FEATURE_NOT_ENABLED} in the
 * body (transactions are not built yet); no block from the controller gives {@code
 * COORDINATOR_NOT_AVAILABLE} (retriable for the Go SDK). Errors carry producer id and epoch -1.
 *
 * <p>Thread-safety: stateless apart from the blocks (synchronized); runs on request threads.
 */
public final class InitProducerIdHandler implements ApiHandler {
    private final ProducerIdBlocks blocks;

    public InitProducerIdHandler(ProducerIdBlocks blocks) {
        this.blocks = blocks;
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        InitProducerIdRequest request = InitProducerIdRequest.read(body);
        if (request.transactionalId() != null) {
            context.respond(InitProducerIdResponse.error(Errors.FEATURE_NOT_ENABLED));
            return;
        }
        long id = blocks.nextProducerId();
        context.respond(
                id == ProducerIdBlocks.NONE
                        ? InitProducerIdResponse.error(Errors.COORDINATOR_NOT_AVAILABLE)
                        : new InitProducerIdResponse(Errors.NONE, id, (short) 0));
    }
}
