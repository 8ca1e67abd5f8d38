package io.stellflow.protocol.compression;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Cross-checks gzip, lz4 and zstd against the reference command-line tools (Debian's {@code gzip},
 * {@code lz4}, {@code zstd} packages): what we compress, the tool decompresses to the same bytes, and
 * what the tool compresses (at its default and at a high level), we decompress. Snappy has no
 * standard tool: its framing is checked by the hand-derived vector of {@code
 * GoldenVectorsCompressionTest}. A tool that is not installed skips its case with an assumption
 * naming the package to install.
 */
class CliCrossCheckTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(
            value = CompressionType.class,
            names = {"GZIP", "LZ4", "ZSTD"})
    void theToolDecompressesWhatWeCompress(CompressionType type) throws Exception {
        String tool = tool(type);
        byte[] data = sample(300_000);
        try (CompressionCodec codec = CompressionCodecs.codec(type)) {
            Path in = dir.resolve("ours." + type.configName());
            Files.write(in, Streams.compress(codec, data));
            Path out = dir.resolve("ours.out");
            run(List.of(tool, "-d", "-c", in.toString()), out);
            assertThat(Files.readAllBytes(out)).isEqualTo(data);
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = CompressionType.class,
            names = {"GZIP", "LZ4", "ZSTD"})
    void weDecompressWhatTheToolCompresses(CompressionType type) throws Exception {
        String tool = tool(type);
        byte[] data = sample(300_000);
        Path in = dir.resolve("plain.txt");
        Files.write(in, data);
        for (String level : List.of("-1", "-9")) {
            Path out = dir.resolve("tool" + level + "." + type.configName());
            run(List.of(tool, level, "-c", in.toString()), out);
            try (CompressionCodec codec = CompressionCodecs.codec(type)) {
                Streams.Outcome got = Streams.decompress(codec, Files.readAllBytes(out), data.length);
                assertThat(got.code())
                        .as("%s %s: %s", tool, level, got.failureReason())
                        .isEqualTo(Decompressor.END_OF_STREAM);
                assertThat(got.bytes()).isEqualTo(data);
            }
        }
    }

    private static String tool(CompressionType type) {
        String name = type.configName();
        boolean present = false;
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            present |= Files.isExecutable(Path.of(d, name));
        }
        assumeTrue(present, "'" + name + "' is not on the PATH: install Debian's " + name + " package to cross-check");
        return name;
    }

    /** Log-like text with repeats and variety: what a batch of JSON records looks like. */
    private static byte[] sample(int bytes) {
        SplittableRandom random = new SplittableRandom(21);
        String[] levels = {"INFO", "WARN", "DEBUG", "ERROR"};
        StringBuilder sb = new StringBuilder(bytes + 200);
        while (sb.length() < bytes) {
            sb.append("{\"ts\":").append(1_764_800_000_000L + random.nextInt(1_000_000));
            sb.append(",\"level\":\"").append(levels[random.nextInt(levels.length)]);
            sb.append("\",\"user\":").append(random.nextInt(50_000));
            sb.append(",\"latencyMs\":").append(random.nextInt(2_000)).append("}\n");
        }
        return sb.substring(0, bytes).getBytes(StandardCharsets.US_ASCII);
    }

    private static void run(List<String> command, Path stdout) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(command);
        Process p = new ProcessBuilder(cmd)
                .redirectOutput(stdout.toFile())
                .redirectError(ProcessBuilder.Redirect.PIPE)
                .start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(cmd + " did not finish in 60 s");
        }
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as("%s: %s", cmd, err).isZero();
    }
}
