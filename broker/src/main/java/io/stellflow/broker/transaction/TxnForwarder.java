package io.stellflow.broker.transaction;

import io.netty.channel.Channel;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.replication.BrokerRequests;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ApiMessage;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Forwards a transactional control request (InitProducerId with a transactional id,
 * BeginTransaction, EndTransaction) that reached a broker which is not the id's coordinator to the
 * coordinator, and relays its answer ({@code docs/exactly-once.md}, "Forwarding"). The Go SDK sends
 * these requests to its bootstrap broker and never looks up a transaction coordinator, so without
 * this a multi-broker cluster could not serve its transactions.
 *
 * <p>The coordinator is the leader of the id's {@code __transaction_state} partition in this
 * broker's metadata image. The request body is sent as received, with the client's apiKey and
 * apiVersion, over the broker-to-broker client ({@link BrokerRequests}); the answer body is relayed
 * byte for byte, so every version the coordinator serves is forwarded without being decoded. The
 * one field read from the answer is its first, the int16 errorCode (the layout of every version of
 * these three responses): an answer {@code NOT_COORDINATOR} (the coordinator moved meanwhile) is
 * forwarded once more to the leader of a fresh lookup, when that is another remote broker; otherwise
 * the client gets {@code COORDINATOR_NOT_AVAILABLE}, which the Go SDK and our producer retry.
 *
 * <p>Outcomes for the client: the coordinator's answer; {@code COORDINATOR_NOT_AVAILABLE} (16) when
 * the partition has no leader, the coordinator cannot be reached, did not answer within the
 * broker-to-broker request timeout ({@code replica.socket.timeout.ms}, 30000 by default; {@link
 * BrokerRequests}), refused the request in its header (an apiVersion it does not serve), or moved
 * twice; nothing at all when the client's connection closed before the request was sent (the rule
 * of control requests: a delayed request of a gone client must not act on a later transaction).
 * Once sent, the coordinator asks this broker, before it runs the request, whether the client's
 * connection is still open ({@link #isOpen}, ForwardStatus): each forward is numbered (a forward id,
 * in the client id of the forwarded request: {@code stellflow-broker-<id>/forward-<forwardId>},
 * {@link BrokerRequests#sendForward}) and its client's channel kept here until the answer is relayed
 * or the forward failed. A forward whose client has gone is dropped by the coordinator ({@code
 * ForwardGate}), so a delayed forwarded End cannot end the client's next transaction.
 *
 * <p>A request that came from another broker (client id {@link BrokerRequests#CLIENT_ID_PREFIX}) is
 * never forwarded again: two brokers with different metadata cannot bounce a request between them.
 *
 * <p>Thread-safety: any thread; never blocks (answers are relayed on the broker-to-broker event
 * loop).
 */
public final class TxnForwarder {
    private static final Logger LOG = LoggerFactory.getLogger(TxnForwarder.class);

    /**
     * Sends a request body to a broker as forward {@code forwardId}; the answer body's bytes, or a
     * failed future.
     */
    @FunctionalInterface
    public interface Sender {
        CompletableFuture<byte[]> send(int destination, short apiKey, short version, long forwardId, byte[] body);
    }

    /** A forwarded request's origin, from its client id: the forwarding broker and its forward id. */
    public record Forward(int brokerId, long forwardId) {}

    /** {@link #route}: this broker runs the request itself. */
    public static final int LOCAL = -1;

    /** {@link #route}: forwarded, or answered with an error, or dropped; nothing left to do. */
    public static final int HANDLED = -2;

    private final int brokerId;
    private final Supplier<MetadataImage> image;
    private final Sender sender;
    /** Outstanding forwards: forward id to the client's channel, until answered or failed. */
    private final Map<Long, Channel> outstanding = new ConcurrentHashMap<>();
    /**
     * The next forward id; starts at a random point, so a forward id of a previous run of this broker
     * still waiting at a coordinator is (all but certainly) unknown here: closed.
     */
    private final AtomicLong nextForwardId =
            new AtomicLong(ThreadLocalRandom.current().nextLong(1L << 62));

    /**
     * @param brokerId this broker's id
     * @param image the latest metadata image
     * @param sender the broker-to-broker client
     */
    public TxnForwarder(int brokerId, Supplier<MetadataImage> image, Sender sender) {
        this.brokerId = brokerId;
        this.image = image;
        this.sender = sender;
    }

    /** A forwarder over the broker-to-broker client {@code requests}. */
    public static TxnForwarder over(int brokerId, Supplier<MetadataImage> image, Supplier<BrokerRequests> requests) {
        return new TxnForwarder(
                brokerId,
                image,
                (destination, apiKey, version, forwardId, body) ->
                        requests.get().sendForward(destination, apiKey, version, forwardId, body));
    }

    /**
     * The origin of a request forwarded by another broker, parsed from its client id ({@code
     * stellflow-broker-<brokerId>/forward-<forwardId>}); null for any other client id, including a
     * broker's own requests and a forward of a broker older than ForwardStatus.
     */
    public static Forward forwardOf(String clientId) {
        if (clientId == null || !clientId.startsWith(BrokerRequests.CLIENT_ID_PREFIX)) {
            return null;
        }
        int tag = clientId.indexOf(BrokerRequests.FORWARD_TAG, BrokerRequests.CLIENT_ID_PREFIX.length());
        if (tag < 0) {
            return null;
        }
        try {
            int broker = Integer.parseInt(clientId, BrokerRequests.CLIENT_ID_PREFIX.length(), tag, 10);
            long id = Long.parseLong(clientId, tag + BrokerRequests.FORWARD_TAG.length(), clientId.length(), 10);
            return new Forward(broker, id);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * ForwardStatus: whether forward {@code forwardId} is still outstanding and its client's
     * connection open. Unknown ids (answered, failed, timed out, never made) are closed.
     */
    public boolean isOpen(long forwardId) {
        Channel ch = outstanding.get(forwardId);
        return ch != null && ch.isActive();
    }

    /** The number of outstanding forwards (tests, diagnostics). */
    public int outstanding() {
        return outstanding.size();
    }

    /** The error answer of the request's version with {@code errorCode}. */
    @FunctionalInterface
    public interface ErrorAnswer {
        ApiMessage of(short errorCode);
    }

    /**
     * Routes one request of {@code transactionalId} at {@code partition} of {@code
     * __transaction_state}: {@link #LOCAL} when this broker must run it (it leads the partition, the
     * partition is not known yet, or the request came from another broker); otherwise {@link
     * #HANDLED}: the request was forwarded (its answer is relayed later), answered {@code
     * COORDINATOR_NOT_AVAILABLE} (no leader) or dropped (the connection closed).
     *
     * @param partition the id's partition ({@link TransactionCoordinator#partitionOf}; negative while
     *     {@code __transaction_state} cannot be had: {@link #LOCAL}, which answers the error)
     * @param body a copy of the request body as received (kept until the answer is relayed)
     * @param error the error answer in the request's version
     */
    public int route(RequestContext context, int partition, byte[] body, ErrorAnswer error) {
        String clientId = context.header().clientId();
        if (partition < 0 || (clientId != null && clientId.startsWith(BrokerRequests.CLIENT_ID_PREFIX))) {
            return LOCAL;
        }
        int leader = leaderOf(partition);
        if (leader == brokerId) {
            return LOCAL;
        }
        long forwardId = nextForwardId.getAndIncrement();
        outstanding.put(forwardId, context.channel());
        forward(context, partition, leader, body, error, forwardId, 1);
        return HANDLED;
    }

    private int leaderOf(int partition) {
        TopicImage topic = image.get().topic(TransactionStateTopic.NAME);
        PartitionImage p = topic == null ? null : topic.partition(partition);
        return p == null ? PartitionImage.NO_LEADER : p.leader();
    }

    private void forward(
            RequestContext context,
            int partition,
            int leader,
            byte[] body,
            ErrorAnswer error,
            long forwardId,
            int attempt) {
        if (!context.channel().isActive()) {
            outstanding.remove(forwardId);
            return; // the client is gone: a control request of a closed connection is dropped, never sent
        }
        if (leader == PartitionImage.NO_LEADER) {
            outstanding.remove(forwardId);
            context.respond(error.of(Errors.COORDINATOR_NOT_AVAILABLE));
            return;
        }
        short apiKey = context.header().apiKey();
        short version = context.header().apiVersion();
        CompletableFuture<byte[]> answer;
        try {
            answer = sender.send(leader, apiKey, version, forwardId, body);
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        answer.whenComplete((bytes, e) -> {
            int next = PartitionImage.NO_LEADER;
            if (e == null
                    && bytes != null
                    && bytes.length >= 2
                    && code(bytes) == Errors.NOT_COORDINATOR
                    && attempt == 1) {
                next = leaderOf(partition);
            }
            if (next != PartitionImage.NO_LEADER && next != leader && next != brokerId) {
                forward(context, partition, next, body, error, forwardId, attempt + 1); // same forward id
                return;
            }
            outstanding.remove(forwardId);
            if (e != null || bytes == null || bytes.length < 2) {
                LOG.debug("Forwarding apiKey {} to coordinator {} failed: {}", apiKey, leader, String.valueOf(e));
                context.respond(error.of(Errors.COORDINATOR_NOT_AVAILABLE));
                return;
            }
            if (code(bytes) == Errors.NOT_COORDINATOR) {
                context.respond(error.of(Errors.COORDINATOR_NOT_AVAILABLE));
                return;
            }
            context.respond(out -> out.writeBytes(bytes));
        });
    }

    /** The leading int16 errorCode of an answer body of at least 2 bytes. */
    private static short code(byte[] bytes) {
        return (short) (((bytes[0] & 0xff) << 8) | (bytes[1] & 0xff));
    }
}
