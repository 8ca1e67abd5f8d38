package io.stellflow.tools;

import io.stellflow.controller.proto.DescribeQuorumResponse;
import io.stellflow.controller.proto.ErrorCode;
import io.stellflow.controller.proto.VoterState;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code bin/stellflow-metadata-quorum.sh --bootstrap-server|--bootstrap-controller host:port[,...] describe}: cluster
 * id, voters, leader, term, committed index and the lag of each voter, from the active controller.
 * The status column says {@code Unreachable} for a voter that has not answered the leader for
 * 2.5 x {@code controller.quorum.election.timeout.ms}; {@code LastContactMs} is how long ago it
 * last did (for a voter that never answered this leader: since the leader took office, plus that
 * timeout).
 *
 * <p>Output goes to the picocli command line's out/err writers (stdout/stderr unless a caller set
 * others). Exit status 0, or 1 with {@code error: ...} on stderr when no active controller answered
 * within {@code --timeout-ms} or it answered with an error.
 */
@Command(
        name = "stellflow-metadata-quorum",
        mixinStandardHelpOptions = true,
        description = "Describes the controller (metadata) quorum.",
        subcommands = {MetadataQuorumCommand.Describe.class})
public final class MetadataQuorumCommand {
    @Mixin
    ControllerOptions controller;

    @Command(name = "describe", description = "Cluster id, voters, leader, term, committed index, lag per voter")
    static final class Describe implements Callable<Integer> {
        @CommandLine.ParentCommand
        MetadataQuorumCommand parent;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            return parent.controller.run(spec, (c, out, err) -> {
                DescribeQuorumResponse r = c.describeQuorum();
                if (r.getError() != ErrorCode.NONE) {
                    return ControllerOptions.refused(err, r.getError(), r.getErrorMessage());
                }
                out.printf(
                        "ClusterId: %s%nLeaderId: %d%nTerm: %d%nCommittedIndex: %d%nLastIndex: %d%n",
                        r.getClusterId().isEmpty() ? "-" : r.getClusterId(),
                        r.getLeaderId(),
                        r.getTerm(),
                        r.getCommittedIndex(),
                        r.getLastIndex());
                out.printf(
                        "%-6s %-24s %-12s %-8s %-16s %s%n",
                        "Id", "RaftEndpoint", "MatchIndex", "Lag", "LastContactMs", "Status");
                for (VoterState v : r.getVotersList()) {
                    out.printf(
                            "%-6d %-24s %-12d %-8d %-16d %s%n",
                            v.getId(),
                            v.getRaftEndpoint(),
                            v.getMatchIndex(),
                            v.getLag(),
                            v.getLastContactMsAgo(),
                            status(v, r.getLeaderId()));
                }
                out.flush();
                return 0;
            });
        }
    }

    /**
     * {@code Leader}, {@code Follower}, or {@code Unreachable} for a voter the leader has not heard
     * from for 2.5 election timeouts (LastContactMs then says for how long).
     */
    static String status(VoterState v, int leaderId) {
        if (v.getId() == leaderId) {
            return "Leader";
        }
        return v.getUnreachable() ? "Unreachable" : "Follower";
    }

    public static void main(String[] args) {
        System.exit(
                Tools.withVersion(new CommandLine(new MetadataQuorumCommand())).execute(args));
    }
}
