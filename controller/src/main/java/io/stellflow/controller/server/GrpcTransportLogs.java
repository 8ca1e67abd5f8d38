package io.stellflow.controller.server;

import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes the java.util.logging (JUL) output of gRPC's Netty transport packages (the controller's
 * {@code controller.listener} server, shaded by grpc-netty-shaded, and Ratis' Raft server, shaded by
 * Ratis) to SLF4J, one line each, instead of JUL's console handler (which also printed {@code
 * TcpMetrics}' "Epoll available" INFO line at every start). A client that speaks something
 * other than HTTP/2 to a controller port (our tools probing for a wrong port, or any port scan) made
 * that transport log {@code INFO: Transport failed} with a 25-line {@code Http2Exception} stack trace
 * on stderr, outside the log file (issue #22). Now: records below WARNING become one DEBUG line
 * (message and the exception's own message), WARNING and above a WARN line with the stack trace.
 *
 * <p>Thread-safety: {@link #install} is idempotent and may be called from any thread; the handler is
 * called on gRPC's event-loop threads.
 */
final class GrpcTransportLogs {
    private static final Logger LOG = LoggerFactory.getLogger(GrpcTransportLogs.class);

    /**
     * The JUL loggers, held here: JUL keeps loggers only weakly, and a collected logger would come
     * back without our handler.
     */
    private static final List<java.util.logging.Logger> TRANSPORTS = List.of(
            java.util.logging.Logger.getLogger("io.grpc.netty.shaded.io.grpc.netty"),
            java.util.logging.Logger.getLogger("org.apache.ratis.thirdparty.io.grpc.netty"));

    private static final Handler TO_SLF4J = new Handler() {
        @Override
        public void publish(LogRecord r) {
            Throwable t = r.getThrown();
            if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                LOG.warn("GRPC_TRANSPORT {} {}", r.getLoggerName(), r.getMessage(), t);
            } else if (LOG.isDebugEnabled()) {
                LOG.debug("GRPC_TRANSPORT {} {}{}", r.getLoggerName(), r.getMessage(), t == null ? "" : ": " + t);
            }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    private GrpcTransportLogs() {}

    /** Installs the handler on the two packages' JUL loggers, in place of their parents' handlers. */
    static synchronized void install() {
        for (java.util.logging.Logger l : TRANSPORTS) {
            if (l.getUseParentHandlers()) {
                l.setUseParentHandlers(false);
                l.addHandler(TO_SLF4J);
            }
        }
    }
}
