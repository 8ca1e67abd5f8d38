package io.stellflow.client;

import io.stellflow.protocol.ApiKeys;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.MetadataRequest;
import io.stellflow.protocol.message.MetadataResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;
import java.util.function.ToIntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin client's routing of group calls ({@code docs/protocol-additions.md}, apiKeys 5, 6 and
 * 21-25): FindCoordinator (apiKey 7, spec §6.8) at a bootstrap broker, then the call at the group's
 * coordinator; a coordinator that answers NOT_COORDINATOR (17) or COORDINATOR_NOT_AVAILABLE (16,
 * still loading its partition), or that cannot be reached, is looked up again after {@code
 * retry.backoff.ms} doubled per retry (at most {@code retry.backoff.max.ms}), up to {@code retries}
 * times, each retry logged at WARN with the code (at most one line per back-off). Blocking; each wait
 * is bounded by {@code request.timeout.ms} plus one second.
 *
 * <p>Thread-safety: thread-safe (no state beyond the shared {@link NetworkClient}).
 */
final class AdminGroupCalls {
    private static final Logger LOG = LoggerFactory.getLogger(AdminGroupCalls.class);

    private final ClientConfig config;
    private final NetworkClient network;
    private final MetadataCache metadata;

    /** Lookups and Metadata go to a broker of {@code metadata} ({@link MetadataCache#sendToAnyBroker}). */
    AdminGroupCalls(NetworkClient network, MetadataCache metadata) {
        this.config = network.config();
        this.network = network;
        this.metadata = metadata;
    }

    /**
     * The coordinator of {@code groupId}, asked of a broker of the metadata (a bootstrap broker before
     * the first Metadata answer; one that refuses the connection is passed over for the next, {@link
     * MetadataCache#sendToAnyBroker}), again after a retriable answer or no answer.
     *
     * @throws StellflowException the FindCoordinator error once retries ran out (16 while every answer
     *     was COORDINATOR_NOT_AVAILABLE), NETWORK_ERROR when no bootstrap broker answered, or a
     *     non-retriable code at once (FEATURE_NOT_ENABLED from a broker without groups, INVALID_REQUEST)
     */
    HostPort findCoordinator(String groupId) {
        StellflowException last = null;
        for (int attempt = 0; attempt <= config.retries(); attempt++) {
            if (attempt > 0) {
                retryAfter(attempt, last.getMessage());
            }
            try {
                return await(
                        NetworkGroupTransport.findCoordinator(network, metadata, groupId),
                        "FindCoordinator " + groupId,
                        config.requestTimeoutMs());
            } catch (StellflowException e) {
                // a refusal or an unreachable broker: retry coordinator and retriable codes only
                if (!isCoordinatorError(e.errorCode()) && !e.retriable()) {
                    throw e;
                }
                last = e;
            }
        }
        throw last;
    }

    /**
     * Sends one request to {@code groupId}'s coordinator at the highest version up to {@code
     * highestWanted} both sides speak, and retries on another lookup while {@code coordinatorCode} of
     * the answer is 16 or 17 or the coordinator cannot be reached.
     *
     * @param coordinatorCode the answer's group-level error code (checked for 16 and 17 only; the
     *     caller interprets the others)
     * @return the last answer (which may carry 16 or 17 when the retries ran out)
     */
    <T> T call(
            String groupId,
            String what,
            short apiKey,
            short highestWanted,
            IntFunction<BodyWriter> bodies,
            IntFunction<BodyReader<T>> readers,
            ToIntFunction<T> coordinatorCode) {
        StellflowException lastNetwork = null;
        T last = null;
        for (int attempt = 0; attempt <= config.retries(); attempt++) {
            if (attempt > 0) {
                retryAfter(
                        attempt,
                        lastNetwork != null
                                ? lastNetwork.getMessage()
                                : what + " answered " + Errors.name((short) coordinatorCode.applyAsInt(last)));
            }
            HostPort coordinator = findCoordinator(groupId);
            try {
                last = await(
                        network.sendVersioned(coordinator, apiKey, highestWanted, bodies, readers),
                        what + " at coordinator " + coordinator,
                        config.requestTimeoutMs());
                lastNetwork = null;
            } catch (StellflowException e) {
                if (e.errorCode() != StellflowException.NETWORK_ERROR) {
                    throw e;
                }
                lastNetwork = e;
                continue;
            }
            if (!isCoordinatorError((short) coordinatorCode.applyAsInt(last))) {
                return last;
            }
        }
        if (lastNetwork != null) {
            throw lastNetwork;
        }
        return last;
    }

    /**
     * The data-plane addresses of every live broker, from Metadata at a broker of the metadata (one
     * that refuses the connection is passed over, {@link MetadataCache#sendToAnyBroker}).
     */
    List<HostPort> brokers() {
        MetadataRequest req = new MetadataRequest(List.of(), false, false, false);
        MetadataResponse m = await(
                metadata.sendToAnyBroker(to -> network.send(to, ApiKeys.METADATA, req::write, MetadataResponse::read)),
                "Metadata",
                config.requestTimeoutMs());
        List<HostPort> out = new ArrayList<>(m.brokers().size());
        for (MetadataResponse.Broker b : m.brokers()) {
            out.add(new HostPort(b.host(), b.port()));
        }
        return out;
    }

    /** The API's answer at {@code address} (no coordinator routing), e.g. ListGroups per broker. */
    <T> T callBroker(HostPort address, String what, short apiKey, BodyWriter body, BodyReader<T> reader) {
        return await(network.send(address, apiKey, body, reader), what + " at " + address, config.requestTimeoutMs());
    }

    /** NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE: look the coordinator up again. */
    static boolean isCoordinatorError(short code) {
        return code == Errors.NOT_COORDINATOR || code == Errors.COORDINATOR_NOT_AVAILABLE;
    }

    /**
     * Waits for {@code f} at most {@code requestTimeoutMs} plus one second.
     *
     * @throws StellflowException the future's own, UNKNOWN_SERVER_ERROR for another failure, or
     *     NETWORK_ERROR on the timeout or an interrupt
     */
    static <T> T await(CompletableFuture<T> f, String what, int requestTimeoutMs) {
        try {
            return f.get(requestTimeoutMs + 1000L, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof StellflowException se) {
                throw se;
            }
            throw new StellflowException(Errors.UNKNOWN_SERVER_ERROR, what + " failed", e.getCause());
        } catch (TimeoutException e) {
            throw new StellflowException(StellflowException.NETWORK_ERROR, what + " timed out");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StellflowException(StellflowException.NETWORK_ERROR, what + " interrupted", e);
        }
    }

    /** Logs why retry {@code attempt} happens, then waits its back-off. */
    private void retryAfter(int attempt, String why) {
        long ms = config.retryBackoffMs(attempt);
        LOG.warn("{}; retry {} of {} in {} ms", why, attempt, config.retries(), ms);
        pause(ms);
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StellflowException(StellflowException.NETWORK_ERROR, "interrupted", e);
        }
    }
}
