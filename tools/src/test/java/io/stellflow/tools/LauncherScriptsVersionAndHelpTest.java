package io.stellflow.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.stellflow.client.StellflowVersion;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The node launchers in {@code bin/} answer {@code --version} and {@code --help} with exit 0, as the
 * Java tools do ({@link ToolsVersionAndHelpTest}), without starting a JVM (issue #22: {@code
 * stellflow-server.sh --version} printed a pid-file error, {@code stellflow-controller.sh --version}
 * tried to read a file named {@code --version}, {@code stellflow-aot-train.sh --version} called it an
 * unknown argument).
 */
class LauncherScriptsVersionAndHelpTest {
    private static final Path BIN = Path.of("").toAbsolutePath().getParent().resolve("bin");

    private static final List<String> SCRIPTS = List.of(
            "stellflow-server.sh", "stellflow-controller.sh", "stellflow-server-stop.sh", "stellflow-aot-train.sh");

    private record Result(int exit, String out, String err) {}

    private static Result run(String script, String arg) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(BIN.resolve(script).toString(), arg)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).as(script + " " + arg).isTrue();
        return new Result(p.exitValue(), out, err);
    }

    @Test
    void everyLauncherPrintsTheVersion() throws Exception {
        for (String script : SCRIPTS) {
            Result r = run(script, "--version");
            assertThat(r.exit()).as(script + ": " + r.err()).isZero();
            assertThat(r.out()).as(script).isEqualTo("Stellflow " + StellflowVersion.version() + "\n");
            assertThat(r.err()).as(script).isEmpty();
        }
    }

    @Test
    void everyLauncherPrintsItsUsage() throws Exception {
        for (String script : SCRIPTS) {
            Result r = run(script, "--help");
            assertThat(r.exit()).as(script + ": " + r.err()).isZero();
            assertThat(r.out())
                    .as(script)
                    .containsIgnoringCase("usage")
                    .contains("--version")
                    .doesNotStartWith("error");
            assertThat(r.err()).as(script).isEmpty();
        }
    }
}
