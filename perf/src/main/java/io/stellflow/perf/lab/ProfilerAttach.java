package io.stellflow.perf.lab;

import com.sun.tools.attach.VirtualMachine;

/**
 * Sends one async-profiler command ({@code start,event=cpu,...} or {@code stop,file=x.html}) to a
 * running JVM by loading the profiler's native agent through the JDK attach API. Usage: {@code
 * ProfilerAttach <pid> <libasyncProfiler.so> <command>}. Exits non-zero (with the cause) when the
 * attach or the agent fails.
 */
public final class ProfilerAttach {
    private ProfilerAttach() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: ProfilerAttach <pid> <libasyncProfiler.so> <command>");
            System.exit(2);
        }
        VirtualMachine vm = VirtualMachine.attach(args[0]);
        try {
            vm.loadAgentPath(args[1], args[2]);
        } finally {
            vm.detach();
        }
    }
}
