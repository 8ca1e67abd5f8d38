package io.stellflow.broker.transaction;

import io.stellflow.broker.network.RequestContext;
import io.stellflow.broker.replication.BrokerRequests;
import io.stellflow.controller.image.MetadataImage;
import io.stellflow.controller.image.PartitionImage;
import io.stellflow.controller.image.TopicImage;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.ApiMessage;
import java.util.concurrent.CompletableFuture;
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
 * Once sent, the coordinator runs the request even if the client disconnects afterwards (the
 * broker-to-broker connection stays open); the client never sees that answer, as with a local
 * request whose connection closes after its command ran.
 *
 * <p>A request that came from another broker (client id {@link BrokerRequests#CLIENT_ID_PREFIX}) is
 * never forwarded again: two brokers with different metadata cannot bounce a request between them.
 *
 * <p>Thread-safety: any thread; never blocks (answers are relayed on the broker-to-broker event
 * loop).
 */
public final class TxnForwarder {
    private static final Logger LOG = LoggerFactory.getLogger(TxnForwarder.class);

    /** Sends a request body to a broker; the answer body's bytes, or a failed future. */
    @FunctionalInterface
    public interface Sender {
        CompletableFuture<byte[]> send(int destination, short apiKey, short version, byte[] body);
    }

    /** {@link #route}: this broker runs the request itself. */
    public static final int LOCAL = -1;

    /** {@link #route}: forwarded, or answered with an error, or dropped; nothing left to do. */
    public static final int HANDLED = -2;

    private final int brokerId;
    private final Supplier<MetadataImage> image;
    private final Sender sender;

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
                (destination, apiKey, version, body) -> requests.get().sendRaw(destination, apiKey, version, body));
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
        forward(context, partition, leader, body, error, 1);
        return HANDLED;
    }

    private int leaderOf(int partition) {
        TopicImage topic = image.get().topic(TransactionStateTopic.NAME);
        PartitionImage p = topic == null ? null : topic.partition(partition);
        return p == null ? PartitionImage.NO_LEADER : p.leader();
    }

    private void forward(
            RequestContext context, int partition, int leader, byte[] body, ErrorAnswer error, int attempt) {
        if (!context.channel().isActive()) {
            return; // the client is gone: a control request of a closed connection is dropped, never sent
        }
        if (leader == PartitionImage.NO_LEADER) {
            context.respond(error.of(Errors.COORDINATOR_NOT_AVAILABLE));
            return;
        }
        short apiKey = context.header().apiKey();
        short version = context.header().apiVersion();
        CompletableFuture<byte[]> answer;
        try {
            answer = sender.send(leader, apiKey, version, body);
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        answer.whenComplete((bytes, e) -> {
            if (e != null || bytes == null || bytes.length < 2) {
                LOG.debug("Forwarding apiKey {} to coordinator {} failed: {}", apiKey, leader, String.valueOf(e));
                context.respond(error.of(Errors.COORDINATOR_NOT_AVAILABLE));
                return;
            }
            short code = (short) (((bytes[0] & 0xff) << 8) | (bytes[1] & 0xff));
            if (code == Errors.NOT_COORDINATOR) {
                int next = leaderOf(partition);
                if (attempt == 1 && next != leader && next != brokerId) {
                    forward(context, partition, next, body, error, attempt + 1);
                } else {
                    context.respond(error.of(Errors.COORDINATOR_NOT_AVAILABLE));
                }
                return;
            }
            context.respond(out -> out.writeBytes(bytes));
        });
    }
}
