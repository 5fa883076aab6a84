package dev.mcpchaos.core.transport;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/** Native epoll where the platform has it, NIO elsewhere: the one place that chooses. */
public final class NettyTransports {

    private static final boolean EPOLL = Epoll.isAvailable();

    private NettyTransports() {
    }

    /** {@code epoll} or {@code nio}. */
    public static String name() {
        return EPOLL ? "epoll" : "nio";
    }

    /** A group of {@code threads} event loops (0: Netty's default, twice the cores) with daemon threads. */
    public static EventLoopGroup newEventLoopGroup(int threads, String name) {
        IoHandlerFactory io = EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true), io);
    }

    public static Class<? extends ServerChannel> serverChannelType() {
        return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    public static Class<? extends SocketChannel> socketChannelType() {
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }
}
