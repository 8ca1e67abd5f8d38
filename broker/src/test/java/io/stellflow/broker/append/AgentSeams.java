package io.stellflow.broker.append;

/**
 * Reaches the append agents' package-private test seam from tests of other packages (the broker
 * integration tests): {@link AppendService#endAgentThreadForTest}.
 */
public final class AgentSeams {
    private AgentSeams() {}

    /** Agent {@code i}'s loop returns as if its thread had died (nothing drained or answered). */
    public static void endAgentThread(AppendService service, int i) {
        service.endAgentThreadForTest(i);
    }
}
