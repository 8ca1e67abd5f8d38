package io.stellflow.broker.handler;

import io.netty.buffer.ByteBuf;
import io.stellflow.broker.network.ApiHandler;
import io.stellflow.broker.network.RequestContext;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeControllersRequest;
import io.stellflow.protocol.message.DescribeControllersResponse;
import io.stellflow.protocol.message.DescribeControllersResponse.ControllerEndpoint;
import java.util.ArrayList;
import java.util.List;

/**
 * DescribeControllers (apiKey 60, v0, {@code docs/protocol-additions.md}), answered by any broker
 * from its own configuration: the control-plane endpoints its controller client uses ({@code
 * controller.quorum.bootstrap.servers}, or the embedded controller's bound endpoint in combined
 * mode). The tools use it to reach the controllers when given only {@code --bootstrap-server}.
 *
 * <p>Thread-safety: immutable; the answer is built once.
 */
public final class DescribeControllersHandler implements ApiHandler {
    private final DescribeControllersResponse answer;

    /**
     * @param controllerEndpoints {@code host:port} entries (IPv6 literals in brackets), as
     *     {@code ControllerClient} takes them
     * @throws IllegalArgumentException when an entry is not {@code host:port} with a numeric port
     */
    public DescribeControllersHandler(List<String> controllerEndpoints) {
        List<ControllerEndpoint> endpoints = new ArrayList<>();
        for (String e : controllerEndpoints) {
            endpoints.add(parse(e));
        }
        this.answer = new DescribeControllersResponse(Errors.NONE, endpoints);
    }

    static ControllerEndpoint parse(String hostPort) {
        int colon = hostPort.lastIndexOf(':');
        if (colon <= 0 || colon == hostPort.length() - 1) {
            throw new IllegalArgumentException("controller endpoint '" + hostPort + "' is not host:port");
        }
        String host = hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return new ControllerEndpoint(host, Integer.parseInt(hostPort.substring(colon + 1)));
    }

    @Override
    public void handle(RequestContext context, ByteBuf body) {
        DescribeControllersRequest.read(body);
        context.respond(answer);
    }
}
