package io.stellflow.testsupport;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

class LogLinesTest {
    private static final String NAME = "io.stellflow.testsupport.LogLinesTest.subject";
    private final Logger subject = (Logger) LoggerFactory.getLogger(NAME);

    /** Registered as the tests of other modules do: it must capture this class's own lines. */
    @RegisterExtension
    final LogLines registered = LogLines.root();

    @Test
    void aRegisteredCaptureSeesTheTestsLinesOnTheRootLogger() {
        subject.warn("REGISTERED_EVENT k=1");
        assertThat(registered.messages("REGISTERED_EVENT")).containsExactly("REGISTERED_EVENT k=1");
    }

    @Test
    void capturesFormattedEventsWhileStartedOnlyAndEachTestStartsEmpty() {
        LogLines lines = LogLines.of(NAME).atLevel(Level.DEBUG);
        subject.warn("BEFORE_START");
        lines.beforeEach(null);
        subject.debug("SOME_EVENT dir={} files={}", "/d", 3);
        subject.info("SOME_EVENT_LONGER dir=/d");
        subject.info("OTHER k=v");
        subject.error("SOME_EVENT dir=/e failed", new IllegalStateException("boom"));
        LoggerFactory.getLogger(NAME + ".child").info("SOME_EVENT from a child");
        lines.afterEach(null);
        subject.error("AFTER_STOP");

        assertThat(lines.messages())
                .containsExactly(
                        "SOME_EVENT dir=/d files=3",
                        "SOME_EVENT_LONGER dir=/d",
                        "OTHER k=v",
                        "SOME_EVENT dir=/e failed",
                        "SOME_EVENT from a child");
        assertThat(lines.messages("SOME_EVENT"))
                .as("the name and a space: a longer name is another event")
                .containsExactly("SOME_EVENT dir=/d files=3", "SOME_EVENT dir=/e failed", "SOME_EVENT from a child");
        assertThat(lines.events("SOME_EVENT dir=/d"))
                .extracting(ILoggingEvent::getLevel)
                .containsExactly(Level.DEBUG);
        assertThat(lines.at(Level.INFO))
                .extracting(ILoggingEvent::getFormattedMessage)
                .containsExactly("SOME_EVENT_LONGER dir=/d", "OTHER k=v", "SOME_EVENT from a child");
        assertThat(lines.withThrowable())
                .singleElement()
                .satisfies(e -> assertThat(e.getThrowableProxy().getMessage()).isEqualTo("boom"));
        assertThat(lines.events()).hasSize(5);

        lines.beforeEach(null);
        assertThat(lines.events()).as("a new test starts empty").isEmpty();
        lines.afterEach(null);
    }

    @Test
    void atLevelSetsTheLoggersLevelWhileCapturingAndRestoresTheOneBefore() {
        subject.setLevel(Level.ERROR);
        try {
            LogLines lines = LogLines.of(NAME).atLevel(Level.INFO);
            lines.beforeEach(null);
            assertThat(subject.getLevel()).isEqualTo(Level.INFO);
            subject.debug("BELOW");
            subject.info("AT");
            lines.afterEach(null);
            assertThat(subject.getLevel()).isEqualTo(Level.ERROR);
            assertThat(lines.messages()).containsExactly("AT");
        } finally {
            subject.setLevel(null);
        }
        LogLines unchanged = LogLines.of(NAME);
        unchanged.beforeEach(null);
        unchanged.afterEach(null);
        assertThat(subject.getLevel()).as("no atLevel: the level is left alone").isNull();
    }

    @Test
    void aClassScopedCaptureKeepsTheEventsOfEveryTestOfTheClass() {
        LogLines lines = LogLines.of(NAME).atLevel(Level.INFO);
        lines.beforeAll(null);
        lines.beforeEach(null);
        subject.info("FIRST");
        lines.afterEach(null);
        lines.beforeEach(null);
        subject.info("SECOND");
        lines.afterEach(null);
        subject.info("BETWEEN_AFTER_EACH_AND_AFTER_ALL");
        lines.afterAll(null);
        subject.info("AFTER_ALL");

        assertThat(lines.messages()).containsExactly("FIRST", "SECOND", "BETWEEN_AFTER_EACH_AND_AFTER_ALL");
    }

    @Test
    void readsWhileOtherThreadsAppendSeeAPrefixAndLoseNothing() throws Exception {
        LogLines lines = LogLines.of(NAME).atLevel(Level.INFO);
        subject.setAdditive(false); // 20 000 lines: not to the console
        try {
            appendFromFourThreadsWhileReading(lines);
        } finally {
            subject.setAdditive(true);
        }
    }

    private void appendFromFourThreadsWhileReading(LogLines lines) throws InterruptedException {
        lines.beforeEach(null);
        int threads = 4;
        int perThread = 5_000;
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> writers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            writers.add(Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    subject.info("APPENDED writer={} i={}", id, i);
                }
            }));
        }
        go.countDown();
        int reads = 0;
        int lastSize = 0;
        while (writers.stream().anyMatch(Thread::isAlive)) {
            int size = lines.messages("APPENDED").size(); // would throw ConcurrentModificationException on a plain list
            assertThat(size).isGreaterThanOrEqualTo(lastSize);
            lastSize = size;
            reads++;
        }
        for (Thread w : writers) {
            w.join();
        }
        lines.afterEach(null);

        assertThat(reads).isPositive();
        assertThat(lines.events("APPENDED")).hasSize(threads * perThread);
        for (int t = 0; t < threads; t++) {
            String writer = "APPENDED writer=" + t + " ";
            assertThat(lines.messages("APPENDED").stream().filter(m -> m.startsWith(writer)))
                    .as("writer %d's lines in its order", t)
                    .isSortedAccordingTo((a, b) -> Integer.compare(index(a), index(b)))
                    .hasSize(perThread);
        }
    }

    private static int index(String message) {
        return Integer.parseInt(message.substring(message.indexOf(" i=") + 3));
    }
}
