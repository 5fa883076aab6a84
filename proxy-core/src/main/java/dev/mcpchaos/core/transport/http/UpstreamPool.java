package dev.mcpchaos.core.transport.http;

import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Idle upstream connections, kept per event loop, for client connections yet to come. A client
 * connection holds its upstream connection as long as it lives (see {@link FrontendHandler});
 * when it closes with its upstream connection idle and healthy (the last response had all come,
 * and the upstream said keep-alive), that connection comes here instead of being closed, and the
 * next client connection on the same event loop takes it instead of connecting. Without this,
 * clients that open a connection per request made the proxy open (and, closing first, leave in
 * TIME_WAIT) an upstream connection per request, and connecting grew slow as the ephemeral ports
 * filled up.
 *
 * <p><b>Limits</b> (defaults): {@value #MAX_IDLE_PER_LOOP} idle connections per event loop (more
 * are closed); an idle connection is closed after {@value #MAX_IDLE_MILLIS} ms, well inside the
 * keep-alive timeouts of common servers (Node's 5 s), so that a connection taken from here is not
 * one the upstream is closing at that moment. An idle connection that the upstream closes, or on
 * which it sends anything, is dropped.
 *
 * <p>Each loop's connections are only touched on that loop.
 */
final class UpstreamPool {

    static final int MAX_IDLE_PER_LOOP = 64;
    static final long MAX_IDLE_MILLIS = 2_000;

    private final Map<EventLoop, ArrayDeque<Idle>> idle = new ConcurrentHashMap<>();

    /** An idle connection of the calling event loop, most recently used first, or null. */
    Channel acquire(EventLoop loop) {
        ArrayDeque<Idle> connections = idle.get(loop);
        if (connections == null) {
            return null;
        }
        for (Idle entry = connections.pollLast(); entry != null; entry = connections.pollLast()) {
            entry.expiry.cancel(false);
            if (entry.channel.isActive()) {
                return entry.channel;
            }
        }
        return null;
    }

    /** Keeps an idle, healthy connection for later, or closes it when enough are kept. On its loop. */
    void release(Channel channel) {
        EventLoop loop = channel.eventLoop();
        ArrayDeque<Idle> connections = idle.computeIfAbsent(loop, l -> new ArrayDeque<>());
        if (connections.size() >= MAX_IDLE_PER_LOOP || !channel.isActive()) {
            channel.close();
            return;
        }
        channel.config().setAutoRead(true); // to notice the upstream closing it while it waits here
        Idle entry = new Idle(channel);
        entry.expiry = loop.schedule(() -> {
            if (connections.remove(entry)) {
                channel.close();
            }
        }, MAX_IDLE_MILLIS, TimeUnit.MILLISECONDS);
        connections.addLast(entry);
    }

    /** The connection closed, or misbehaved while idle: forgets it. On its loop. */
    void remove(Channel channel) {
        ArrayDeque<Idle> connections = idle.get(channel.eventLoop());
        if (connections == null) {
            return;
        }
        for (Iterator<Idle> it = connections.iterator(); it.hasNext(); ) {
            Idle entry = it.next();
            if (entry.channel == channel) {
                it.remove();
                entry.expiry.cancel(false);
                return;
            }
        }
    }

    /** How many idle connections are kept, on all loops; for tests (a racy read from other threads). */
    int idleCount() {
        int count = 0;
        for (ArrayDeque<Idle> connections : idle.values()) {
            count += connections.size();
        }
        return count;
    }

    /** The idle connections kept now, on all loops; for tests (a racy read from other threads). */
    List<Channel> idleChannels() {
        List<Channel> channels = new ArrayList<>();
        for (ArrayDeque<Idle> connections : idle.values()) {
            for (Idle entry : connections) {
                channels.add(entry.channel);
            }
        }
        return channels;
    }

    private static final class Idle {
        final Channel channel;
        ScheduledFuture<?> expiry;

        Idle(Channel channel) {
            this.channel = channel;
        }
    }
}
