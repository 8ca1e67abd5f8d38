package io.stellflow.tools;

import io.stellflow.controller.proto.BrokerDescription;
import io.stellflow.controller.proto.DescribeClusterResponse;
import io.stellflow.controller.proto.ErrorCode;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code bin/stellflow-cluster.sh --bootstrap-server|--bootstrap-controller host:port[,...]}: the cluster id, the active
 * controller, and the brokers, fenced or not, racks.
 *
 * <p>Output goes to the picocli command line's out/err writers (stdout/stderr unless a caller set
 * others). Exit status 0, or 1 with {@code error: ...} on stderr when no active controller answered
 * within {@code --timeout-ms} or it answered with an error.
 */
@Command(
        name = "stellflow-cluster",
        mixinStandardHelpOptions = true,
        description = "Cluster id, active controller and the registered brokers: id, fenced, rack, epoch, listeners.")
public final class ClusterCommand implements Callable<Integer> {
    @Mixin
    ControllerOptions controller;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return controller.run(spec, (c, out, err) -> {
            DescribeClusterResponse r = c.describeCluster();
            if (r.getError() != ErrorCode.NONE) {
                return ControllerOptions.refused(err, r.getError(), r.getErrorMessage());
            }
            out.printf(
                    "ClusterId: %s%nActiveController: %d%nMetadataOffset: %d%n",
                    r.getClusterId().isEmpty() ? "-" : r.getClusterId(), r.getControllerId(), r.getMetadataOffset());
            out.printf(
                    "%-8s %-8s %-10s %-10s %-38s %s%n",
                    "Broker", "Fenced", "Rack", "Epoch", "Incarnation", "Listeners");
            for (BrokerDescription b : r.getBrokersList()) {
                out.printf(
                        "%-8d %-8s %-10s %-10d %-38s %s%n",
                        b.getBrokerId(),
                        b.getFenced(),
                        b.getRack().isEmpty() ? "-" : b.getRack(),
                        b.getBrokerEpoch(),
                        new UUID(
                                b.getIncarnationId().getMostSignificantBits(),
                                b.getIncarnationId().getLeastSignificantBits()),
                        b.getListenersList().stream()
                                .map(l -> l.getName() + "://" + l.getHost() + ":" + l.getPort())
                                .collect(Collectors.joining(",")));
            }
            out.flush();
            return 0;
        });
    }

    public static void main(String[] args) {
        System.exit(Tools.withVersion(new CommandLine(new ClusterCommand())).execute(args));
    }
}
