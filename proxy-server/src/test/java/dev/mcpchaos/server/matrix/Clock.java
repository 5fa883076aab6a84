package dev.mcpchaos.server.matrix;

/** One scenario's clock: nanoseconds since it began, shared by the client, the server and the checks. */
final class Clock {

    private final long origin = System.nanoTime();

    long now() {
        return System.nanoTime() - origin;
    }
}
