package dev.mcpchaos.core.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.socket.SocketChannel;

/**
 * Native epoll where the platform has it, NIO elsewhere: the transport of the proxy's own
 * listeners (control API, operations) and of the benchmarks' peers. Not io_uring, which the HTTP
 * proxy's data path takes by default ({@link IoTransport#auto()}): these carry few requests, so
 * they would gain nothing from it, and the benchmarks' peers stay what earlier runs measured
 * against.
 */
public final class NettyTransports {

    private static final IoTransport TRANSPORT = IoTransport.EPOLL.isAvailable() ? IoTransport.EPOLL : IoTransport.NIO;

    private NettyTransports() {
    }

    /** {@code epoll} or {@code nio}. */
    public static String name() {
        return TRANSPORT.label();
    }

    /** A group of {@code threads} event loops (0: Netty's default, twice the cores) with daemon threads. */
    public static EventLoopGroup newEventLoopGroup(int threads, String name) {
        return TRANSPORT.newEventLoopGroup(threads, name);
    }

    public static Class<? extends ServerChannel> serverChannelType() {
        return TRANSPORT.serverChannelType();
    }

    public static Class<? extends SocketChannel> socketChannelType() {
        return TRANSPORT.socketChannelType();
    }
}
