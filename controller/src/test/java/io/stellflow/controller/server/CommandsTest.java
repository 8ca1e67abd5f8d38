package io.stellflow.controller.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.controller.ControllerMetrics;
import io.stellflow.controller.ControllerMetrics.CommandResult;
import io.stellflow.controller.proto.ErrorCode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class CommandsTest {
    /** One recorded {@link ControllerMetrics#command} call. */
    record Command(CommandResult result, long latencyNs) {}

    /** Records commands; everything else is a no-op. */
    static final class RecordingMetrics implements ControllerMetrics {
        final List<Command> commands = new ArrayList<>();

        @Override
        public synchronized void command(CommandResult result, long latencyNs) {
            commands.add(new Command(result, latencyNs));
        }
    }

    @Test
    void noneIsSuccessTimedOutIsTimeoutEveryOtherCodeIsError() {
        for (ErrorCode e : ErrorCode.values()) {
            if (e == ErrorCode.UNRECOGNIZED) {
                continue;
            }
            CommandResult expected = switch (e) {
                case NONE -> CommandResult.SUCCESS;
                case REQUEST_TIMED_OUT -> CommandResult.TIMEOUT;
                default -> CommandResult.ERROR;
            };
            assertThat(Commands.result(e)).as(e.name()).isEqualTo(expected);
        }
    }

    @Test
    void aRequestWithSeveralItemsCountsItsWorst() {
        CommandResult r = CommandResult.SUCCESS;
        r = Commands.worse(r, ErrorCode.NONE);
        assertThat(r).isEqualTo(CommandResult.SUCCESS);
        r = Commands.worse(r, ErrorCode.TOPIC_ALREADY_EXISTS);
        assertThat(r).isEqualTo(CommandResult.ERROR);
        r = Commands.worse(r, ErrorCode.NONE);
        assertThat(r).as("a later success does not hide an error").isEqualTo(CommandResult.ERROR);
        r = Commands.worse(r, ErrorCode.REQUEST_TIMED_OUT);
        assertThat(r).isEqualTo(CommandResult.TIMEOUT);
        r = Commands.worse(r, ErrorCode.INVALID_CONFIG);
        assertThat(r).as("timeout is worse than error").isEqualTo(CommandResult.TIMEOUT);
    }

    @Test
    void latencyIsFromArrivalToAnswerOnTheInjectedClock() {
        AtomicLong nowNs = new AtomicLong(1_000_000_000L);
        RecordingMetrics metrics = new RecordingMetrics();
        Commands commands = new Commands(new FakeQuorum(1), 5_000, metrics, nowNs::get);
        long startNs = commands.startNs();
        assertThat(startNs).isEqualTo(1_000_000_000L);
        nowNs.addAndGet(7_500_000L);
        commands.answered(CommandResult.TIMEOUT, startNs);
        assertThat(metrics.commands).containsExactly(new Command(CommandResult.TIMEOUT, 7_500_000L));
    }

    @Test
    void commitSubmitsTheRecordsAsOneEntry() {
        FakeQuorum q = new FakeQuorum(1);
        Commands commands = new Commands(q, 5_000, ControllerMetrics.NOOP, () -> 0L);
        RaftQuorum.Submitted s = commands.commit(List.of());
        assertThat(s.error()).isEqualTo(ErrorCode.NONE);
        assertThat(s.index()).isEqualTo(1);
        assertThat(q.submitted).hasSize(1);
    }
}
