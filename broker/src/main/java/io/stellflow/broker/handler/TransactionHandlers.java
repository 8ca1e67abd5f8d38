package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.stellflow.broker.cluster.ProducerIdBlocks;
import io.stellflow.broker.coordinator.CoordinatorException;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.EventLoopApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.transaction.ForwardGate;
import io.stellflow.broker.transaction.TransactionCoordinator;
import io.stellflow.broker.transaction.TransactionPartition;
import io.stellflow.broker.transaction.TransactionStateMachine.TxnResult;
import io.stellflow.broker.transaction.TxnForwarder;
import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.BeginTransactionRequest;
import io.stellflow.protocol.message.EndTransactionRequest;
import io.stellflow.protocol.message.ForwardStatusRequest;
import io.stellflow.protocol.message.ForwardStatusResponse;
import io.stellflow.protocol.message.InitProducerIdRequest;
import io.stellflow.protocol.message.InitProducerIdResponse;
import io.stellflow.protocol.message.RegisterTxnPartitionRequest;
import io.stellflow.protocol.message.RegisterTxnPartitionResponse;
import io.stellflow.protocol.message.TransactionResponse;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transactional APIs ({@code docs/spec/wire-protocol.md} §6.12-6.13; RegisterTxnPartition, key
 * 29, in {@code docs/protocol-additions.md}): InitProducerId with a null transactionalId is the
 * idempotent producer's (a new producer id from this broker's block, epoch 0); with a transactional id,
 * and BeginTransaction, EndTransaction and RegisterTxnPartition, it is routed to the id's partition of
 * {@code __transaction_state} and run by the {@link TransactionCoordinator} on this broker when it
 * leads that partition. A broker that does not forwards InitProducerId, BeginTransaction and
 * EndTransaction to the leader of that partition and relays the answer ({@link TxnForwarder}: the
 * Go SDK sends them to its bootstrap broker); without a forwarder, or for a request forwarded by
 * another broker, it answers {@code NOT_COORDINATOR} (17), as the group APIs do. Request threads
 * never wait for a command.
 *
 * <p>Our versions ({@code docs/protocol-additions.md}, "Our transactional producer"): InitProducerId v1
 * carries the producer's transaction timeout, BeginTransaction v1 answers the transaction's sequence
 * and EndTransaction v1 carries it (another sequence than the current transaction's: {@code
 * INVALID_TXN_STATE}).
 *
 * <p>A control request whose connection closed before its command ran is dropped: nothing is written
 * and nothing answered (the client is gone; a delayed Begin or End must not act on a later
 * transaction). A control request another broker forwarded passes the {@link ForwardGate} first:
 * it runs only if the forwarding broker says its client's connection to it is still open (else it
 * is answered {@code COORDINATOR_NOT_AVAILABLE} without running), and later requests of its id wait
 * behind it meanwhile. ForwardStatus (key 35, {@code docs/protocol-additions.md}) answers that
 * question for this broker's own forwards. Errors are in the body, with producer id and epoch -1
 * (InitProducerId) or echoed and state {@code FAILED} (Begin, End). A null or empty transactional id
 * is {@code INVALID_REQUEST}.
 *
 * <p>Thread-safety: stateless apart from the thread-safe coordinator and blocks.
 */
public final class TransactionHandlers {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionHandlers.class);

    private final TransactionCoordinator coordinator;
    private final ProducerIdBlocks blocks;
    private final TxnForwarder forwarder;
    private final ForwardGate gate;

    /**
     * @param coordinator this broker's transaction coordinator
     * @param blocks the producer ids of idempotent producers (and of new transactional ids)
     * @param forwarder sends requests of ids coordinated elsewhere to their coordinator; null answers
     *     them {@code NOT_COORDINATOR}
     * @param gate checks forwarded requests before they run; null runs them unchecked
     */
    public TransactionHandlers(
            TransactionCoordinator coordinator, ProducerIdBlocks blocks, TxnForwarder forwarder, ForwardGate gate) {
        this.coordinator = coordinator;
        this.blocks = blocks;
        this.forwarder = forwarder;
        this.gate = gate;
    }

    /**
     * Runs {@code command} (which submits a control request of {@code transactionalId} to the
     * coordinator) through the gate: at once for a client's own request with nothing waiting; for a
     * forwarded one only once its forwarding broker said the client is still there, else {@code
     * refuse}.
     */
    private void gated(RequestContext context, String transactionalId, Runnable command, Runnable refuse) {
        if (gate == null) {
            command.run();
            return;
        }
        gate.submit(transactionalId, TxnForwarder.forwardOf(context.header().clientId()), command, refuse);
    }

    /**
     * Whether the request was forwarded to another broker (or answered or dropped on the way):
     * nothing left to do here. Otherwise this broker runs it.
     */
    private boolean forwarded(
            RequestContext context,
            ByteBuf body,
            int bodyStart,
            String transactionalId,
            TxnForwarder.ErrorAnswer error) {
        if (forwarder == null) {
            return false;
        }
        int partition = coordinator.partitionOf(transactionalId);
        byte[] raw = ByteBufUtil.getBytes(body, bodyStart, body.writerIndex() - bodyStart);
        return forwarder.route(context, partition, raw, error) == TxnForwarder.HANDLED;
    }

    /** The handlers by API key. */
    public Map<Short, ApiHandler> handlers() {
        Map<Short, ApiHandler> h = new LinkedHashMap<>();
        h.put(ApiKeys.INIT_PRODUCER_ID, versioned(InitProducerIdRequest.VERSION_WITH_TIMEOUT, this::initProducerId));
        h.put(
                ApiKeys.BEGIN_TRANSACTION,
                onEventLoop(TransactionResponse.BEGIN_VERSION_WITH_SEQUENCE, this::beginTransaction));
        h.put(ApiKeys.END_TRANSACTION, onEventLoop(EndTransactionRequest.VERSION_IMPLICIT_BEGIN, this::endTransaction));
        h.put(ApiKeys.REGISTER_TXN_PARTITION, this::registerTxnPartition);
        h.put(ApiKeys.FORWARD_STATUS, this::forwardStatus);
        return h;
    }

    private static ApiHandler versioned(short maxVersion, ApiHandler handler) {
        return new ApiHandler() {
            @Override
            public void handle(RequestContext context, ByteBuf body) {
                handler.handle(context, body);
            }

            @Override
            public short maxVersion() {
                return maxVersion;
            }
        };
    }

    /**
     * A Begin or End handler ({@code handler}) that also runs on the event loop when this broker's
     * coordinator has the request's transactional id loaded ({@link TransactionCoordinator#coordinatesNow}):
     * it then only decodes, queues the command on the runtime thread and returns, so the hop through
     * the request pool is skipped. Otherwise (not coordinated here: forwarded; the topic missing:
     * its creation may wait on the controller; loading) it goes to the pool as before. Both APIs'
     * bodies start with the transactional id; the decoded "request" is the body itself, unread.
     */
    private EventLoopApiHandler<ByteBuf> onEventLoop(short maxVersion, ApiHandler handler) {
        return new EventLoopApiHandler<>() {
            @Override
            public ByteBuf decodeIfNonBlocking(ByteBuf body) {
                int start = body.readerIndex();
                if (body.readableBytes() < Short.BYTES) {
                    return null;
                }
                int length = body.getShort(start);
                if (length <= 0 || body.readableBytes() < Short.BYTES + length) {
                    return null; // null, empty or malformed: the pool answers it
                }
                String id = body.toString(start + Short.BYTES, length, StandardCharsets.UTF_8);
                return coordinator.coordinatesNow(id) ? body : null;
            }

            @Override
            public void handleDecoded(RequestContext context, ByteBuf body) {
                handler.handle(context, body);
            }

            @Override
            public void handle(RequestContext context, ByteBuf body) {
                handler.handle(context, body);
            }

            @Override
            public short maxVersion() {
                return maxVersion;
            }
        };
    }

    private static BooleanSupplier open(RequestContext context) {
        Channel ch = context.channel();
        return ch::isActive;
    }

    private static short codeOf(Throwable e) {
        short code = CoordinatorException.errorCodeOf(e);
        if (code == Errors.UNKNOWN_SERVER_ERROR) {
            LOG.error("Transaction command failed", e);
        }
        return code;
    }

    private void initProducerId(RequestContext context, ByteBuf body) {
        int bodyStart = body.readerIndex();
        InitProducerIdRequest request =
                InitProducerIdRequest.read(body, context.header().apiVersion());
        String id = request.transactionalId();
        if (id == null) {
            long pid = blocks.nextProducerId();
            context.respond(
                    pid == ProducerIdBlocks.NONE
                            ? InitProducerIdResponse.error(Errors.COORDINATOR_NOT_AVAILABLE)
                            : new InitProducerIdResponse(Errors.NONE, pid, (short) 0));
            return;
        }
        if (id.isEmpty()) {
            context.respond(InitProducerIdResponse.error(Errors.INVALID_REQUEST));
            return;
        }
        if (forwarded(context, body, bodyStart, id, InitProducerIdResponse::error)) {
            return;
        }
        gated(
                context,
                id,
                () -> coordinator
                        .initProducerId(id, request.transactionTimeoutMs(), open(context))
                        .whenComplete((r, e) -> {
                            if (e != null) {
                                context.respond(InitProducerIdResponse.error(codeOf(e)));
                            } else if (r != null) {
                                context.respond(
                                        r.errorCode() == Errors.NONE
                                                ? new InitProducerIdResponse(
                                                        Errors.NONE, r.producerId(), r.producerEpoch())
                                                : InitProducerIdResponse.error(r.errorCode()));
                            }
                        }),
                () -> context.respond(InitProducerIdResponse.error(Errors.COORDINATOR_NOT_AVAILABLE)));
    }

    private void beginTransaction(RequestContext context, ByteBuf body) {
        int bodyStart = body.readerIndex();
        BeginTransactionRequest req = BeginTransactionRequest.read(body);
        boolean withSequence = context.header().apiVersion() >= TransactionResponse.BEGIN_VERSION_WITH_SEQUENCE;
        if (missing(req.transactionalId())) {
            respond(context, failed(Errors.INVALID_REQUEST, req.producerId(), req.producerEpoch()), withSequence);
            return;
        }
        if (forwarded(context, body, bodyStart, req.transactionalId(), code -> {
            TransactionResponse f = failed(code, req.producerId(), req.producerEpoch());
            return withSequence ? out -> f.write(out, true) : f;
        })) {
            return;
        }
        gated(
                context,
                req.transactionalId(),
                () -> coordinator
                        .beginTransaction(req.transactionalId(), req.producerId(), req.producerEpoch(), open(context))
                        .whenComplete(
                                (r, e) -> answer(context, r, e, req.producerId(), req.producerEpoch(), withSequence)),
                () -> respond(
                        context,
                        failed(Errors.COORDINATOR_NOT_AVAILABLE, req.producerId(), req.producerEpoch()),
                        withSequence));
    }

    private void endTransaction(RequestContext context, ByteBuf body) {
        int bodyStart = body.readerIndex();
        EndTransactionRequest req =
                EndTransactionRequest.read(body, context.header().apiVersion());
        if (missing(req.transactionalId())) {
            context.respond(failed(Errors.INVALID_REQUEST, req.producerId(), req.producerEpoch()));
            return;
        }
        if (forwarded(
                context,
                body,
                bodyStart,
                req.transactionalId(),
                code -> failed(code, req.producerId(), req.producerEpoch()))) {
            return;
        }
        gated(
                context,
                req.transactionalId(),
                () -> coordinator
                        .endTransaction(
                                req.transactionalId(),
                                req.producerId(),
                                req.producerEpoch(),
                                req.commit(),
                                req.transactionSequence(),
                                open(context))
                        .whenComplete((r, e) -> answer(context, r, e, req.producerId(), req.producerEpoch(), false)),
                () -> context.respond(failed(Errors.COORDINATOR_NOT_AVAILABLE, req.producerId(), req.producerEpoch())));
    }

    /** ForwardStatus: whether this broker's forward is outstanding with its client still connected. */
    private void forwardStatus(RequestContext context, ByteBuf body) {
        ForwardStatusRequest req = ForwardStatusRequest.read(body);
        context.respond(new ForwardStatusResponse(Errors.NONE, forwarder != null && forwarder.isOpen(req.forwardId())));
    }

    /** Answers Begin or End; {@code withSequence}: BeginTransaction v1, whose answer carries the sequence. */
    private static void answer(
            RequestContext context, TxnResult r, Throwable e, long producerId, short epoch, boolean withSequence) {
        if (e != null) {
            respond(context, failed(codeOf(e), producerId, epoch), withSequence);
        } else if (r != null) {
            respond(
                    context,
                    r.errorCode() == Errors.NONE
                            ? new TransactionResponse(
                                    Errors.NONE, producerId, epoch, r.state().wireName(), r.transactionSequence())
                            : failed(r.errorCode(), producerId, epoch),
                    withSequence);
        } // else: the connection closed before the command ran; nothing to answer
    }

    private static void respond(RequestContext context, TransactionResponse response, boolean withSequence) {
        if (withSequence) {
            context.respond(out -> response.write(out, true));
        } else {
            context.respond(response);
        }
    }

    private static TransactionResponse failed(short code, long producerId, short epoch) {
        return new TransactionResponse(code, producerId, epoch, TransactionResponse.FAILED);
    }

    private void registerTxnPartition(RequestContext context, ByteBuf body) {
        RegisterTxnPartitionRequest req = RegisterTxnPartitionRequest.read(body);
        if (req.transactionalId().isEmpty() || req.topic().isEmpty() || req.partition() < 0) {
            context.respond(new RegisterTxnPartitionResponse(Errors.INVALID_REQUEST, -1));
            return;
        }
        coordinator
                .registerPartition(
                        req.transactionalId(),
                        req.producerId(),
                        req.producerEpoch(),
                        req.transactionSequence(),
                        new TransactionPartition(req.topic(), req.partition()))
                .whenComplete((r, e) -> context.respond(
                        e != null
                                ? new RegisterTxnPartitionResponse(codeOf(e), -1)
                                : new RegisterTxnPartitionResponse(r.errorCode(), r.transactionSequence())));
    }

    private static boolean missing(String transactionalId) {
        return transactionalId == null || transactionalId.isEmpty();
    }
}
