package io.stellflow.controller.server;

import io.grpc.MethodDescriptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.stellflow.controller.image.BrokerEndpoint;
import io.stellflow.controller.proto.ControllerLeader;
import io.stellflow.controller.proto.ErrorCode;
import java.util.function.Function;

/**
 * The one place that decides whether this controller answers a control-plane request, and that
 * answers {@code NOT_CONTROLLER} naming the leader when it does not ({@code controller_service.proto}:
 * every unary response carries {@code error}, {@code error_message} and {@code leader}; FollowMetadata
 * sends one {@code not_controller} event). A request is served only while this node is the active
 * controller (Raft leader that committed an entry of its term), has finished its activation (its
 * first command, which names it the active controller in the image, is committed: see {@link
 * #activationPending}) and the control plane is not closed. So every record a request writes comes
 * after the new controller's activation record in the metadata log, as in a Kafka controller, whose
 * first records in a new epoch are its activation: a broker that applied its own registration also
 * knows the cluster id and the active controller.
 *
 * <p>The RPC families ({@link BrokerRpcs}, {@link TopicRpcs}, ...) are registered through {@link
 * #unary} and {@link #serverStreaming}, so they never see a request while inactive; they ask {@link
 * #leader} only when leadership is lost between that check and their commit.
 *
 * <p>Thread-safety: callable from any thread (gRPC executor threads, stream threads); {@link #close}
 * is visible to every later check.
 */
final class NotControllerGuard {
    /**
     * Builds one RPC's answer for a request this controller does not serve.
     *
     * @param <R> the RPC's response type
     */
    @FunctionalInterface
    interface Redirect<R> {
        /**
         * @param error always {@link ErrorCode#NOT_CONTROLLER}
         * @param message why, naming the leader or saying an election is in progress
         * @param leader the leader's id (-1 when unknown) and, when this node knows it, its endpoint
         */
        R answer(ErrorCode error, String message, ControllerLeader leader);
    }

    private final int nodeId;
    private final Quorum quorum;
    private volatile boolean closed;
    private volatile boolean activationPending;

    /**
     * @param nodeId this controller's {@code node.id}
     * @param quorum the metadata quorum this controller votes in
     */
    NotControllerGuard(int nodeId, Quorum quorum) {
        this.nodeId = nodeId;
        this.quorum = quorum;
    }

    /** From now on every request is answered NOT_CONTROLLER and metadata streams end. */
    void close() {
        closed = true;
    }

    /** Whether {@link #close} was called. */
    boolean isClosed() {
        return closed;
    }

    /**
     * Holds ({@code true}) or releases requests while this node's activation is under way: its
     * server sets it when leadership changes and clears it once its first command as leader is
     * committed. Off by default (a guard without a server serves whenever the quorum is active).
     */
    void activationPending(boolean pending) {
        activationPending = pending;
    }

    /** Whether requests wait for this node's activation. */
    boolean activationPending() {
        return activationPending;
    }

    /** The Raft leader that committed an entry of its term and finished its activation. */
    private boolean ready() {
        return quorum.isActive() && !activationPending;
    }

    /**
     * Whether this node serves requests now: the active controller, activated, and not closed.
     */
    boolean isActive() {
        return ready() && !closed;
    }

    /**
     * Who the leader is, for NOT_CONTROLLER answers: its id (-1 while an election is in progress) and
     * its control-plane endpoint when the image has it. This node names itself without an endpoint
     * while it leads but is not ready (or not activated) yet, so callers do not retry here at once.
     */
    ControllerLeader leader() {
        int id = quorum.leaderId();
        ControllerLeader.Builder b = ControllerLeader.newBuilder().setLeaderId(id);
        if (id >= 0 && !(id == nodeId && !ready())) {
            BrokerEndpoint e = quorum.image().controllers().get(id);
            if (e != null) {
                b.setEndpoint(e.toProto());
            }
        }
        return b.build();
    }

    /** The {@code error_message} of a NOT_CONTROLLER answer naming {@code leader}. */
    static String message(ControllerLeader leader) {
        return "this controller is not active; leader is "
                + (leader.getLeaderId() < 0 ? "unknown (election in progress)" : String.valueOf(leader.getLeaderId()));
    }

    /**
     * The answer to one unary request: {@code handler}'s while this node {@link #isActive is active},
     * else {@code redirect}'s NOT_CONTROLLER naming the leader.
     */
    <Q, R> R answer(Q request, Function<Q, R> handler, Redirect<R> redirect) {
        if (!isActive()) {
            ControllerLeader l = leader();
            return redirect.answer(ErrorCode.NOT_CONTROLLER, message(l), l);
        }
        return handler.apply(request);
    }

    /** A unary method whose requests reach {@code handler} only while active (see {@link #answer}). */
    <Q, R> ServerMethodDefinition<Q, R> unary(
            MethodDescriptor<Q, R> method, Function<Q, R> handler, Redirect<R> redirect) {
        return ServerMethodDefinition.create(method, ServerCalls.asyncUnaryCall((Q req, StreamObserver<R> out) -> {
            out.onNext(answer(req, handler, redirect));
            out.onCompleted();
        }));
    }

    /**
     * A server-streaming method whose calls reach {@code handler} only while active; otherwise the
     * stream is one {@code redirect} event naming the leader, then completed. A long-lived stream
     * re-checks {@link #isActive} itself.
     */
    <Q, R> ServerMethodDefinition<Q, R> serverStreaming(
            MethodDescriptor<Q, R> method,
            ServerCalls.ServerStreamingMethod<Q, R> handler,
            Function<ControllerLeader, R> redirect) {
        return ServerMethodDefinition.create(
                method, ServerCalls.asyncServerStreamingCall((Q req, StreamObserver<R> out) -> {
                    if (!isActive()) {
                        out.onNext(redirect.apply(leader()));
                        out.onCompleted();
                        return;
                    }
                    handler.invoke(req, out);
                }));
    }
}
