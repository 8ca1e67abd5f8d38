package io.stellflow.controller;

import io.stellflow.controller.server.ControllerServer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

/**
 * A bare controller process for this module's process tests ({@code ControllerKillTest} starts three
 * and kills one with SIGKILL): reads a properties file, runs a {@link ControllerServer} without
 * metrics, stops on SIGTERM/SIGINT. Operators start controller-only nodes with
 * {@code bin/stellflow-controller.sh} or {@code bin/stellflow-server.sh} ({@code
 * io.stellflow.controller.node.ControllerNode}, which also exports the controller metrics).
 */
public final class ControllerMain {
    private ControllerMain() {}

    public static void main(String[] args) throws IOException, InterruptedException {
        if (args.length != 1) {
            System.err.println("usage: ControllerMain <controller.properties>");
            System.exit(2);
        }
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(Path.of(args[0]))) {
            p.load(in);
        }
        ControllerServer server;
        try {
            server = ControllerServer.start(ControllerConfig.fromProperties(p));
        } catch (IllegalArgumentException e) {
            System.err.println("bad configuration: " + e.getMessage());
            System.exit(2);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }));
        System.out.println("controller " + server.nodeId() + " serving on " + server.rpcEndpoint());
        stopped.await();
    }
}
