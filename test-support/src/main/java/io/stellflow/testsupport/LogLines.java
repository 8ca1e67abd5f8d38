package io.stellflow.testsupport;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.UnsynchronizedAppenderBase;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Predicate;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

/**
 * A JUnit 5 extension that captures the logback events of one logger (and of the loggers below it,
 * as logback's additivity sends them up) while a test runs, for tests that assert on our event lines
 * ({@code LOG_DIR_OFFLINE dir=... }, {@code BACKGROUND_TASK_FAILED task=... }).
 *
 * <pre>{@code
 * @RegisterExtension
 * final LogLines lines = LogLines.root();                      // one test method
 *
 * @RegisterExtension
 * static final LogLines lines = LogLines.of(Watchdog.class).atLevel(Level.INFO); // the whole class
 * }</pre>
 *
 * <p>Scope: registered on an instance field, it captures from before each {@code @BeforeEach} to
 * after each {@code @AfterEach} method and starts empty for every test; registered on a static
 * field, it captures from before the {@code @BeforeAll} methods to after the {@code @AfterAll}
 * methods, and the events of every test of the class accumulate. {@link #atLevel} sets the logger's
 * level for that time and restores the level it had before (often {@code null}: inherited).
 *
 * <p>Units: every list holds events, one per logging call, in the order they were appended; a
 * message with a stack trace or line breaks is still one event. An event below the logger's
 * effective level is never created, so it is never captured.
 *
 * <p>Thread-safety: events are appended from any thread (brokers' agents, schedulers, request
 * threads) into a lock-free queue; the query methods may run on any thread while appends go on and
 * return an immutable snapshot of what was appended before the call (an append racing with the call
 * may or may not be in it). Formatting happens on the appending thread ({@code
 * prepareForDeferredProcessing}), so a message shows its arguments as they were when logged.
 * Starting and stopping are JUnit's callbacks, one at a time.
 *
 * <p>Needs logback-classic as the SLF4J provider on the test classpath (test-support names it as an
 * optional dependency, so a module using this class names it itself, in test scope at least); fails
 * with an {@link IllegalStateException} otherwise.
 */
public final class LogLines implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
    private final String loggerName;
    private final Level level;
    private final Capture capture = new Capture();
    private Logger logger;
    private Level levelBefore;
    private boolean classScoped;

    private LogLines(String loggerName, Level level) {
        this.loggerName = Objects.requireNonNull(loggerName, "loggerName");
        this.level = level;
    }

    /** The root logger's events: those of every additive logger (logback's default). */
    public static LogLines root() {
        return new LogLines(org.slf4j.Logger.ROOT_LOGGER_NAME, null);
    }

    /** The events of {@code type}'s logger ({@code LoggerFactory.getLogger(type)}). */
    public static LogLines of(Class<?> type) {
        return new LogLines(type.getName(), null);
    }

    /** The events of the logger named {@code loggerName}. */
    public static LogLines of(String loggerName) {
        return new LogLines(loggerName, null);
    }

    /**
     * The same capture with the logger's level set to {@code level} while it runs (restored after),
     * for events the test configuration would drop or to make a test independent of it.
     */
    public LogLines atLevel(Level level) {
        return new LogLines(loggerName, Objects.requireNonNull(level, "level"));
    }

    /** Every captured event, in append order. */
    public List<ILoggingEvent> events() {
        return List.copyOf(capture.events);
    }

    /**
     * The events of one event name: those whose formatted message starts with {@code eventName} and
     * a space (our event lines are the name, then {@code key=value} fields); {@code eventName} may
     * include the first fields ({@code "LOG_DIR_OFFLINE dir=/data"}).
     */
    public List<ILoggingEvent> events(String eventName) {
        String prefix = eventName + " ";
        return filter(e -> e.getFormattedMessage().startsWith(prefix));
    }

    /** The formatted message of every captured event, in append order. */
    public List<String> messages() {
        return capture.events.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    /** The formatted messages of {@link #events(String)}. */
    public List<String> messages(String eventName) {
        return events(eventName).stream()
                .map(ILoggingEvent::getFormattedMessage)
                .toList();
    }

    /** The events logged at exactly {@code level}. */
    public List<ILoggingEvent> at(Level level) {
        return filter(e -> e.getLevel() == level);
    }

    /** The events that carry a throwable (their line would print a stack trace). */
    public List<ILoggingEvent> withThrowable() {
        return filter(e -> e.getThrowableProxy() != null);
    }

    private List<ILoggingEvent> filter(Predicate<ILoggingEvent> keep) {
        return capture.events.stream().filter(keep).toList();
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        classScoped = true;
        start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        stop();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        if (!classScoped) {
            start();
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (!classScoped) {
            stop();
        }
    }

    private void start() {
        if (!(LoggerFactory.getLogger(loggerName) instanceof Logger l)) {
            throw new IllegalStateException("LogLines needs logback-classic as the SLF4J provider, found "
                    + LoggerFactory.getILoggerFactory().getClass().getName());
        }
        logger = l;
        capture.events.clear();
        if (level != null) {
            levelBefore = logger.getLevel();
            logger.setLevel(level);
        }
        capture.setContext(logger.getLoggerContext());
        capture.setName("LogLines-" + loggerName);
        capture.start();
        logger.addAppender(capture);
    }

    private void stop() {
        if (logger == null) {
            return;
        }
        logger.detachAppender(capture);
        capture.stop();
        if (level != null) {
            logger.setLevel(levelBefore);
        }
        logger = null;
    }

    /** The appender: unsynchronized, the queue takes concurrent appends and reads. */
    private static final class Capture extends UnsynchronizedAppenderBase<ILoggingEvent> {
        final ConcurrentLinkedQueue<ILoggingEvent> events = new ConcurrentLinkedQueue<>();

        @Override
        protected void append(ILoggingEvent event) {
            event.prepareForDeferredProcessing();
            events.add(event);
        }
    }
}
