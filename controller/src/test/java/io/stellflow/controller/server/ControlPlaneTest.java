package io.stellflow.controller.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.stellflow.controller.ControllerConfig;
import io.stellflow.controller.ControllerMetrics;
import io.stellflow.controller.image.BrokerEndpoint;
import io.stellflow.controller.image.MetadataRecords;
import io.stellflow.controller.proto.ControllerLeader;
import io.stellflow.controller.proto.ControllerServiceProto;
import io.stellflow.controller.proto.DescribeConfigsRequest;
import io.stellflow.controller.proto.DescribeConfigsResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.MetadataEvent;
import io.stellflow.controller.proto.RegisterControllerRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The assembled service: every RPC of {@code controller_service.proto} is served, and each one sits
 * behind the not-controller guard. Calls go through the registered gRPC handlers with an in-thread
 * {@link ServerCall}, no transport.
 */
class ControlPlaneTest {
    private final FakeQuorum quorum = new FakeQuorum(2);
    private final ControlPlane plane;

    ControlPlaneTest() {
        Properties p = new Properties();
        p.setProperty("node.id", "1");
        p.setProperty("controller.quorum.voters", "1@127.0.0.1:9093,2@127.0.0.1:9094,3@127.0.0.1:9095");
        plane = new ControlPlane(
                ControllerConfig.fromProperties(p),
                quorum,
                new MetadataStateMachine(16, ControllerMetrics.NOOP),
                ControllerMetrics.NOOP,
                () -> 0L);
        quorum.with(List.of(MetadataRecords.of(RegisterControllerRecord.newBuilder()
                .setControllerId(2)
                .setEndpoint(new BrokerEndpoint("CONTROLLER", "127.0.0.1", 9192).toProto())
                .build())));
    }

    /** A server call that records what the handler sends; requests flow in on the caller's thread. */
    static final class RecordingCall<Q, R> extends ServerCall<Q, R> {
        final MethodDescriptor<Q, R> method;
        final List<R> sent = new ArrayList<>();
        Status closed;

        RecordingCall(MethodDescriptor<Q, R> method) {
            this.method = method;
        }

        @Override
        public void request(int numMessages) {}

        @Override
        public void sendHeaders(Metadata headers) {}

        @Override
        public void sendMessage(R message) {
            sent.add(message);
        }

        @Override
        public void close(Status status, Metadata trailers) {
            closed = status;
        }

        @Override
        public boolean isCancelled() {
            return false;
        }

        @Override
        public MethodDescriptor<Q, R> getMethodDescriptor() {
            return method;
        }
    }

    /** Calls {@code def} once with the request type's default instance; returns what it sent. */
    private static <Q, R> RecordingCall<Q, R> call(ServerMethodDefinition<Q, R> def) {
        MethodDescriptor<Q, R> method = def.getMethodDescriptor();
        @SuppressWarnings("unchecked")
        Q request = ((MethodDescriptor.PrototypeMarshaller<Q>) method.getRequestMarshaller()).getMessagePrototype();
        return call(def, request);
    }

    private static <Q, R> RecordingCall<Q, R> call(ServerMethodDefinition<Q, R> def, Q request) {
        RecordingCall<Q, R> c = new RecordingCall<>(def.getMethodDescriptor());
        ServerCall.Listener<Q> listener = def.getServerCallHandler().startCall(c, new Metadata());
        listener.onMessage(request);
        listener.onHalfClose();
        return c;
    }

    @Test
    void everyRpcOfTheProtoIsServed() {
        Set<String> proto =
                ControllerServiceProto.getDescriptor().findServiceByName("ControllerService").getMethods().stream()
                        .map(m -> m.getFullName())
                        .collect(Collectors.toSet());
        Set<String> served = plane.definition().getMethods().stream()
                .map(m -> m.getMethodDescriptor().getFullMethodName().replace('/', '.'))
                .collect(Collectors.toSet());
        assertThat(served).isEqualTo(proto).hasSize(13);
    }

    @Test
    void aControllerThatIsNotActiveAnswersEveryRpcNotControllerNamingTheLeader() {
        quorum.active = false;
        ServerServiceDefinition def = plane.definition();
        int unary = 0;
        for (ServerMethodDefinition<?, ?> m : def.getMethods()) {
            RecordingCall<?, ?> c = call(m);
            String name = m.getMethodDescriptor().getFullMethodName();
            assertThat(c.closed).as(name).isEqualTo(Status.OK);
            assertThat(c.sent).as(name).hasSize(1);
            if (m.getMethodDescriptor().getType() == MethodDescriptor.MethodType.SERVER_STREAMING) {
                MetadataEvent e = (MetadataEvent) c.sent.get(0);
                assertThat(e.hasNotController()).as(name).isTrue();
                assertThat(e.getNotController().getLeaderId()).isEqualTo(2);
                continue;
            }
            unary++;
            Message r = (Message) c.sent.get(0);
            var d = r.getDescriptorForType();
            FieldDescriptor error = d.findFieldByName("error");
            assertThat(r.getField(error)).as(name).isEqualTo(ErrorCode.NOT_CONTROLLER.getValueDescriptor());
            assertThat(r.getField(d.findFieldByName("error_message")))
                    .as(name)
                    .isEqualTo("this controller is not active; leader is 2");
            ControllerLeader l = (ControllerLeader) r.getField(d.findFieldByName("leader"));
            assertThat(l.getLeaderId()).as(name).isEqualTo(2);
            assertThat(l.getEndpoint().getPort()).as(name).isEqualTo(9192);
        }
        assertThat(unary).isEqualTo(12);
        assertThat(quorum.submitted).as("nothing written").isEmpty();
    }

    @Test
    void theActiveControllerServesAndAfterCloseRedirects() {
        quorum.leaderId = 1;
        @SuppressWarnings("unchecked")
        ServerMethodDefinition<DescribeConfigsRequest, DescribeConfigsResponse> describe =
                (ServerMethodDefinition<DescribeConfigsRequest, DescribeConfigsResponse>)
                        plane.definition().getMethod("stellflow.controller.v1.ControllerService/DescribeConfigs");
        DescribeConfigsRequest req =
                DescribeConfigsRequest.newBuilder().setTopic("nope").build();
        assertThat(call(describe, req).sent)
                .singleElement()
                .satisfies(r -> assertThat(r.getError()).isEqualTo(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
        plane.close();
        assertThat(call(describe, req).sent)
                .singleElement()
                .satisfies(r -> assertThat(r.getError()).isEqualTo(ErrorCode.NOT_CONTROLLER));
    }
}
