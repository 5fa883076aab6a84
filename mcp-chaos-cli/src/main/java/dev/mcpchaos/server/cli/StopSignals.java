package dev.mcpchaos.server.cli;

import sun.misc.Signal;

import java.util.function.Consumer;

/** The signals that stop a command that serves until it is told to: SIGTERM and SIGINT. */
final class StopSignals {

    private StopSignals() {
    }

    /**
     * Has {@code stop} called with the signal's name ({@code TERM} or {@code INT}) when one comes,
     * instead of the JVM's default exit, so that the command can end its sessions and streams
     * cleanly and exit 0. A signal the platform lacks, or the JVM reserves, keeps its default.
     */
    static void handle(Consumer<String> stop) {
        for (String name : new String[] {"TERM", "INT"}) {
            try {
                Signal.handle(new Signal(name), signal -> stop.accept(name));
            } catch (IllegalArgumentException e) {
                // no such signal here, or reserved: its default stays
            }
        }
    }
}
