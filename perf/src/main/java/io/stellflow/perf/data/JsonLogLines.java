package io.stellflow.perf.data;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.SplittableRandom;

/**
 * Generates JSON log lines, one per line ({@code \n}-terminated, UTF-8), from a fixed seed: the same
 * seed gives the same bytes on every machine and JDK ({@link SplittableRandom}'s sequence is
 * specified). A line looks like
 *
 * <pre>{@code
 * {"ts":"2026-12-04T16:20:01.123Z","level":"INFO","service":"checkout","host":"checkout-7f9c-3",
 *  "traceId":"4bf92f3577b34da6a3ce929d0e0e4736","userId":48213,"method":"GET",
 *  "url":"/api/v2/orders/918273?expand=items","status":200,"latencyMs":37,"bytes":5123,
 *  "msg":"order 918273 served from cache"}
 * }</pre>
 *
 * (on one line), about 330 bytes on average. The variety is that of a real service log: timestamps
 * rising by a few ms with jitter, levels skewed to INFO (80%), 12 services with 4 hosts each, random
 * 128-bit trace ids (incompressible, as in real logs), user ids skewed to a hot set (a fifth of the
 * lines come from 100 users), 9 URL templates with ids and query strings, statuses mostly 200,
 * latencies with a long tail (most under 50 ms, some seconds), and 16 message templates with
 * variables. Compresses about 3-6x with the usual codecs: a log, not a benchmark's best case.
 *
 * <p>Thread-safety: confined to one thread (it holds the random sequence and the clock).
 */
public final class JsonLogLines {
    private static final String[] LEVELS = {
        "INFO", "INFO", "INFO", "INFO", "INFO", "INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR", "TRACE", "INFO",
        "INFO", "INFO", "INFO", "INFO", "INFO", "INFO", "DEBUG"
    };
    private static final String[] SERVICES = {
        "checkout",
        "payments",
        "search",
        "auth",
        "inventory",
        "gateway",
        "recommendations",
        "notifications",
        "shipping",
        "catalog",
        "profile",
        "billing"
    };
    private static final String[] METHODS = {"GET", "GET", "GET", "GET", "POST", "POST", "PUT", "DELETE"};
    private static final String[] URLS = {
        "/api/v2/orders/%d",
        "/api/v2/orders/%d?expand=items",
        "/api/v1/users/%d",
        "/api/v1/users/%d/preferences",
        "/search?q=%s&page=%d",
        "/cart/%d/items",
        "/health",
        "/api/v2/payments/%d/capture",
        "/static/img/%s.png"
    };
    private static final String[] WORDS = {
        "shoes",
        "laptop",
        "coffee",
        "gift",
        "headphones",
        "desk",
        "lamp",
        "jacket",
        "camera",
        "book",
        "phone",
        "watch",
        "chair",
        "bike",
        "tent",
        "kettle"
    };
    private static final String[] MESSAGES = {
        "order %d served from cache",
        "order %d created",
        "payment %d authorized",
        "payment %d declined: insufficient funds",
        "user %d logged in",
        "user %d session expired",
        "cache miss for key user:%d",
        "retrying request to %s (attempt %d)",
        "slow query on table %s: %d ms",
        "inventory reserved for order %d",
        "shipment %d dispatched",
        "rate limit exceeded for user %d",
        "connection reset by peer %s",
        "feature flag %s evaluated",
        "request completed",
        "health check ok"
    };
    private static final int[] STATUSES = {
        200, 200, 200, 200, 200, 200, 200, 200, 200, 201, 204, 304, 400, 401, 404, 404, 429, 500, 502, 503
    };

    /** ISO 8601 in UTC with milliseconds always printed, as log appenders write it. */
    private static final DateTimeFormatter TIMESTAMP =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private final SplittableRandom random;
    private final StringBuilder line = new StringBuilder(512);
    private long epochMs;

    /** A generator whose first line is stamped {@code startEpochMs}. */
    public JsonLogLines(long seed, long startEpochMs) {
        this.random = new SplittableRandom(seed);
        this.epochMs = startEpochMs;
    }

    /** A generator from {@code seed} starting at 2026-12-04T00:00:00Z. */
    public JsonLogLines(long seed) {
        this(seed, 1_796_342_400_000L);
    }

    /** Whole lines adding up to exactly {@code bytes} bytes (the last one cut, with its newline kept). */
    public static byte[] generate(long seed, int bytes) {
        return new JsonLogLines(seed).fill(bytes);
    }

    /** The next lines adding up to exactly {@code bytes} bytes (the last one cut). */
    public byte[] fill(int bytes) {
        byte[] out = new byte[bytes];
        int pos = 0;
        while (pos < bytes) {
            byte[] l = nextLine().getBytes(StandardCharsets.UTF_8);
            int n = Math.min(l.length, bytes - pos);
            System.arraycopy(l, 0, out, pos, n);
            pos += n;
        }
        if (bytes > 0) {
            out[bytes - 1] = '\n';
        }
        return out;
    }

    /** The next line, newline included. */
    public String nextLine() {
        epochMs += random.nextInt(12);
        int service = random.nextInt(SERVICES.length);
        int user = random.nextInt(5) == 0 ? 1000 + random.nextInt(100) : 1000 + random.nextInt(2_000_000);
        long id = 100_000 + random.nextInt(9_900_000);
        line.setLength(0);
        line.append("{\"ts\":\"");
        TIMESTAMP.formatTo(Instant.ofEpochMilli(epochMs), line);
        line.append('"');
        line.append(",\"level\":\"")
                .append(LEVELS[random.nextInt(LEVELS.length)])
                .append('"');
        line.append(",\"service\":\"").append(SERVICES[service]).append('"');
        line.append(",\"host\":\"")
                .append(SERVICES[service])
                .append('-')
                .append(Integer.toHexString(0x1000 + service * 0x9d1 & 0xffff))
                .append('-')
                .append(random.nextInt(4))
                .append('"');
        line.append(",\"traceId\":\"");
        appendHex(random.nextLong());
        appendHex(random.nextLong());
        line.append('"');
        line.append(",\"userId\":").append(user);
        line.append(",\"method\":\"")
                .append(METHODS[random.nextInt(METHODS.length)])
                .append('"');
        line.append(",\"url\":\"").append(url(id)).append('"');
        line.append(",\"status\":").append(STATUSES[random.nextInt(STATUSES.length)]);
        line.append(",\"latencyMs\":").append(latencyMs());
        line.append(",\"bytes\":").append(200 + random.nextInt(random.nextBoolean() ? 2_000 : 60_000));
        line.append(",\"msg\":\"").append(message(id, user)).append("\"}\n");
        return line.toString();
    }

    private String url(long id) {
        String template = URLS[random.nextInt(URLS.length)];
        if (template.contains("%s&")) {
            return String.format(template, WORDS[random.nextInt(WORDS.length)], 1 + random.nextInt(5));
        }
        if (template.contains("%s")) {
            return String.format(template, WORDS[random.nextInt(WORDS.length)] + "-" + random.nextInt(400));
        }
        return template.contains("%d") ? String.format(template, id) : template;
    }

    private String message(long id, int user) {
        String template = MESSAGES[random.nextInt(MESSAGES.length)];
        if (template.indexOf('%') < 0) {
            return template;
        }
        if (template.startsWith("retrying")) {
            return String.format(template, SERVICES[random.nextInt(SERVICES.length)], 1 + random.nextInt(3));
        }
        if (template.startsWith("slow query")) {
            return String.format(template, WORDS[random.nextInt(WORDS.length)] + "s", 500 + random.nextInt(5000));
        }
        if (template.startsWith("feature flag")) {
            return String.format(template, "new-" + WORDS[random.nextInt(WORDS.length)] + "-page");
        }
        if (template.contains("%s")) {
            return String.format(template, "10.0." + random.nextInt(16) + "." + random.nextInt(256));
        }
        return String.format(template, template.contains("user") ? user : id);
    }

    /** Most requests are fast, a few are slow: 1-50 ms for 90%, up to 3 s for the rest. */
    private int latencyMs() {
        return random.nextInt(10) < 9
                ? 1 + random.nextInt(50)
                : 50 + random.nextInt(random.nextInt(3) == 0 ? 3000 : 500);
    }

    private void appendHex(long v) {
        String hex = Long.toHexString(v);
        for (int i = hex.length(); i < 16; i++) {
            line.append('0');
        }
        line.append(hex);
    }
}
