package io.stellflow.broker;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Logback appender (wired in logback-test.xml) that keeps Netty's LEAK reports for {@link LeakCheck}. */
public final class LeakRecorder extends AppenderBase<ILoggingEvent> {
    static final List<String> LEAKS = new CopyOnWriteArrayList<>();

    @Override
    protected void append(ILoggingEvent event) {
        if (event.getFormattedMessage().contains("LEAK")) {
            LEAKS.add(event.getFormattedMessage());
        }
    }
}
