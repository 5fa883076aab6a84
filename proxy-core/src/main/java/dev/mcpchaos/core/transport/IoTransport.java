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
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.util.Locale;
import java.util.Optional;

/**
 * How the HTTP proxy's sockets talk to the kernel: Linux's io_uring, Linux's epoll, or Java's
 * NIO (anywhere). {@link #auto()}, the default, takes epoll, else NIO; io_uring only when asked.
 *
 * <p>Why io_uring is offered: on the HTTP benchmark it costs about a quarter less CPU per request
 * than epoll (system and user time both: the reads and writes of many connections go to the
 * kernel in one call instead of one call each; docs/benchmarks.md). Why it is not the default: it
 * is refused in many places (kernels before 5.10 or with {@code kernel.io_uring_disabled},
 * containers whose seccomp profile blocks it: Docker 25 and containerd 2.0 and later, by default,
 * because it has been a way into the kernel), where asking for it fails the start, saying why; and
 * it has had less use than epoll, here and in Netty. Where a write reaches the kernel only with
 * the event loop's next batch, code that closes a connection must wait for its writes
 * ({@code FrontendHandler.closeAfterWrites}).
 */
public enum IoTransport {
    IO_URING("io_uring"),
    EPOLL("epoll"),
    NIO("nio");

    private final String label;

    IoTransport(String label) {
        this.label = label;
    }

    /** The name the command line and the logs use: {@code io_uring}, {@code epoll} or {@code nio}. */
    public String label() {
        return label;
    }

    /** Whether this process may use it. */
    public boolean isAvailable() {
        return switch (this) {
            case IO_URING -> IoUring.isAvailable();
            case EPOLL -> Epoll.isAvailable();
            case NIO -> true;
        };
    }

    /** Why it may not be used here; empty when it may. */
    public Optional<String> unavailableBecause() {
        if (isAvailable()) {
            return Optional.empty();
        }
        Throwable cause = this == IO_URING ? IoUring.unavailabilityCause() : Epoll.unavailabilityCause();
        while (cause != null && cause.getCause() != null && cause.getMessage() == null) {
            cause = cause.getCause();
        }
        return Optional.of(cause == null ? "unknown" : cause.getClass().getSimpleName()
                + (cause.getMessage() == null ? "" : ": " + cause.getMessage()));
    }

    /** epoll where this process may use it, else NIO: the proven transports; io_uring only when asked. */
    public static IoTransport auto() {
        return EPOLL.isAvailable() ? EPOLL : NIO;
    }

    /**
     * {@code io_uring}, {@code epoll} or {@code nio} (any case; {@code io-uring} too); null for
     * {@code auto}, which the caller resolves with {@link #auto()}.
     *
     * @throws IllegalArgumentException for any other word
     */
    public static IoTransport parse(String text) {
        String word = text == null ? "" : text.trim().toLowerCase(Locale.ROOT).replace('-', '_');
        return switch (word) {
            case "auto" -> null;
            case "io_uring", "iouring", "uring" -> IO_URING;
            case "epoll" -> EPOLL;
            case "nio" -> NIO;
            default -> throw new IllegalArgumentException("io transport: '" + text
                    + "' (expected: auto, io_uring, epoll or nio)");
        };
    }

    /**
     * This transport, if this process may use it.
     *
     * @throws IllegalStateException naming why not, when it may not
     */
    public IoTransport requireAvailable() {
        Optional<String> why = unavailableBecause();
        if (why.isPresent()) {
            throw new IllegalStateException("io transport " + label + " is not available here (" + why.get()
                    + "); choose auto, which takes epoll, else nio");
        }
        return this;
    }

    /** A group of {@code threads} event loops of this transport (0: Netty's default, twice the cores), daemon threads. */
    public EventLoopGroup newEventLoopGroup(int threads, String name) {
        IoHandlerFactory io = switch (this) {
            case IO_URING -> IoUringIoHandler.newFactory();
            case EPOLL -> EpollIoHandler.newFactory();
            case NIO -> NioIoHandler.newFactory();
        };
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true), io);
    }

    public Class<? extends ServerChannel> serverChannelType() {
        return switch (this) {
            case IO_URING -> IoUringServerSocketChannel.class;
            case EPOLL -> EpollServerSocketChannel.class;
            case NIO -> NioServerSocketChannel.class;
        };
    }

    public Class<? extends SocketChannel> socketChannelType() {
        return switch (this) {
            case IO_URING -> IoUringSocketChannel.class;
            case EPOLL -> EpollSocketChannel.class;
            case NIO -> NioSocketChannel.class;
        };
    }
}
