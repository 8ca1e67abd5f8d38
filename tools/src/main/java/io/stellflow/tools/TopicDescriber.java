package io.stellflow.tools;

import io.stellflow.client.PartitionInfo;
import io.stellflow.client.StellflowAdmin;
import io.stellflow.client.StellflowException;
import io.stellflow.client.TopicDescription;
import io.stellflow.client.TopicPartition;
import io.stellflow.protocol.Errors;
import io.stellflow.protocol.message.DescribeBrokerConfigsResponse;
import java.io.PrintWriter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * {@code stellflow-topics.sh --describe}: per topic a line with its partition count, replication
 * factor and config overrides ({@code Configs: k=v,...}, sorted; the keys set on the topic, as
 * Kafka's tool shows the non-default ones; {@code (unavailable: <why>)} when no controller answers,
 * the rest of the description coming from the brokers), then per partition its leader, leader epoch, replicas, ISR
 * and log start / end offsets (the end is the high watermark, what a consumer can read; {@code -} for
 * a partition without a leader, which is not asked). With a filter only the matching partition lines
 * are printed, without the topic lines, as Kafka's tool does: {@code --under-replicated-partitions}
 * (ISR smaller than the replicas), {@code --unavailable-partitions} (no leader), {@code
 * --under-min-isr-partitions} (ISR smaller than the topic's {@code min.insync.replicas}: its override,
 * else the leader broker's default from DescribeBrokerConfigs; a partition without a leader counts as
 * an ISR of 0 against the smallest default seen) and {@code --at-min-isr-partitions} (ISR exactly
 * that).
 *
 * <p>Thread-safety: confined to the command's thread.
 */
final class TopicDescriber {
    /** Which partitions to print. */
    enum Filter {
        ALL,
        UNDER_REPLICATED,
        UNAVAILABLE,
        UNDER_MIN_ISR,
        AT_MIN_ISR
    }

    static final String MIN_ISR_KEY = "min.insync.replicas";

    private final StellflowAdmin admin;
    /** A topic's config overrides (from the controllers); throws when they cannot be read. */
    private final Function<String, Map<String, String>> configsOf;
    /** How long --describe waits for the controllers' answer about a topic's configs. */
    static final long CONFIGS_WAIT_MS = 5_000;

    /** Set once the controllers failed to give configs: later topics do not wait again. */
    private String configsUnavailable;

    /** Broker id -> its default min.insync.replicas, asked once per broker. */
    private final Map<Integer, Integer> brokerMinIsr = new HashMap<>();

    TopicDescriber(StellflowAdmin admin, Function<String, Map<String, String>> configsOf) {
        this.admin = admin;
        this.configsOf = configsOf;
    }

    /** Describes {@code topic} (null: every topic); 1 when a named topic is unknown, else 0. */
    int describe(String topic, Filter filter, PrintWriter out) {
        int rc = 0;
        for (TopicDescription d :
                admin.describeTopics(topic == null ? List.of() : List.of(topic)).values()) {
            if (d.errorCode() != Errors.NONE) {
                out.println("Topic: " + d.name() + "\tError: " + Errors.name(d.errorCode()));
                rc = 1;
                continue;
            }
            Map<String, String> configs = null;
            String configsText = null;
            if (filter == Filter.UNDER_MIN_ISR || filter == Filter.AT_MIN_ISR) {
                configs = new TreeMap<>(configsOf.apply(d.name())); // needed: a failure ends the command
            } else if (filter == Filter.ALL) {
                configsText = configsOrWhyNot(d.name());
            }
            if (filter == Filter.ALL) {
                int rf = d.partitions().isEmpty()
                        ? 0
                        : d.partitions().get(0).replicas().size();
                out.println("Topic: " + d.name() + "\tPartitionCount: "
                        + d.partitions().size() + "\tReplicationFactor: " + rf + "\tConfigs: " + configsText);
            }
            for (PartitionInfo p : d.partitions()) {
                if (!matches(filter, p, configs)) {
                    continue;
                }
                boolean unavailable = p.leaderId() < 0;
                TopicPartition tp = new TopicPartition(d.name(), p.partition());
                out.println("\tTopic: " + d.name() + "\tPartition: " + p.partition() + "\tLeader: " + p.leaderId()
                        + "\tLeaderEpoch: " + p.leaderEpoch() + "\tReplicas: " + join(p.replicas()) + "\tIsr: "
                        + join(p.isr()) + "\tLogStartOffset: " + offset(tp, unavailable, StellflowAdmin.EARLIEST)
                        + "\tLogEndOffset: " + offset(tp, unavailable, StellflowAdmin.LATEST));
            }
        }
        out.flush();
        return rc;
    }

    /**
     * The topic's overrides as {@code k=v,...}, or why they are unavailable. The partitions come from
     * the brokers, the configs only from the controllers: when those do not answer within {@link
     * #CONFIGS_WAIT_MS}, the description goes on without configs and no other topic asks again.
     */
    private String configsOrWhyNot(String topic) {
        if (configsUnavailable != null) {
            return configsUnavailable;
        }
        CompletableFuture<Map<String, String>> f = CompletableFuture.supplyAsync(() -> configsOf.apply(topic));
        try {
            return join(new TreeMap<>(f.get(CONFIGS_WAIT_MS, TimeUnit.MILLISECONDS)));
        } catch (TimeoutException e) {
            f.cancel(true);
            configsUnavailable = "(unavailable: no controller answered within " + CONFIGS_WAIT_MS + " ms)";
        } catch (ExecutionException e) {
            configsUnavailable = "(unavailable: " + e.getCause().getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            configsUnavailable = "(unavailable: interrupted)";
        }
        return configsUnavailable;
    }

    private boolean matches(Filter filter, PartitionInfo p, Map<String, String> configs) {
        return switch (filter) {
            case ALL -> true;
            case UNAVAILABLE -> p.leaderId() < 0;
            case UNDER_REPLICATED -> p.isr().size() < p.replicas().size();
            case UNDER_MIN_ISR -> p.isr().size() < minIsr(p, configs);
            case AT_MIN_ISR -> p.isr().size() == minIsr(p, configs);
        };
    }

    /** The partition's min.insync.replicas: the topic's override, else its leader's (or any replica's) default. */
    private int minIsr(PartitionInfo p, Map<String, String> configs) {
        String override = configs.get(MIN_ISR_KEY);
        if (override != null) {
            try {
                return Integer.parseInt(override.strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "topic " + p.topic() + " has an unreadable " + MIN_ISR_KEY + " '" + override + "'");
            }
        }
        int broker = p.leaderId() >= 0
                ? p.leaderId()
                : p.replicas().isEmpty() ? -1 : p.replicas().get(0);
        if (broker < 0) {
            return 1;
        }
        return brokerMinIsr.computeIfAbsent(broker, this::brokerDefaultMinIsr);
    }

    private int brokerDefaultMinIsr(int broker) {
        try {
            for (DescribeBrokerConfigsResponse.Entry e :
                    admin.describeBrokerConfigs(broker, List.of(MIN_ISR_KEY)).configs()) {
                if (e.key().equals(MIN_ISR_KEY) && e.value() != null) {
                    return Integer.parseInt(e.value());
                }
            }
        } catch (IllegalArgumentException | StellflowException e) {
            // A replica that is down is not in the Metadata's brokers: Kafka's default, 1.
        }
        return 1;
    }

    /** The offset, or {@code -} when the partition has no leader or the leader could not answer. */
    private String offset(TopicPartition tp, boolean unavailable, long spec) {
        if (unavailable) {
            return "-";
        }
        try {
            return Long.toString(admin.listOffsets(tp, spec));
        } catch (StellflowException e) {
            return "-";
        }
    }

    private static String join(Map<String, String> configs) {
        StringBuilder sb = new StringBuilder();
        configs.forEach((k, v) ->
                sb.append(sb.isEmpty() ? "" : ",").append(k).append('=').append(v));
        return sb.toString();
    }

    private static String join(List<Integer> ids) {
        StringBuilder sb = new StringBuilder();
        for (Integer id : ids) {
            if (!sb.isEmpty()) {
                sb.append(',');
            }
            sb.append(id);
        }
        return sb.toString();
    }
}
