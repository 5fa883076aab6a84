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
 * NIO (anywhere). {@link #auto()}, the default, takes the first of them this process may use.
 *
 * <p>Why io_uring is the default: on the HTTP benchmark it costs about a quarter less CPU per
 * request than epoll, below nginx's as a proxy where epoll is above it (system and user time
 * both: the reads and writes of many connections go to the kernel in one call instead of one call
 * each; docs/benchmarks.md), and the whole test suite (fault matrix, adversarial suite, soak,
 * fuzz, paranoid leak detection) passes on it as on epoll. Why the default falls back by itself:
 * io_uring is refused in many places (kernels before 5.10 or with {@code kernel.io_uring_disabled},
 * containers whose seccomp profile blocks it: Docker 25 and containerd 2.0 and later, by default,
 * because it has been a way into the kernel), and a sidecar that failed to start there would be
 * worse than one that costs a little more. {@link #autoChoice()} says which it took and, when it
 * passed io_uring over, why; the proxy logs that once when it starts. Asked for by name, a
 * transport that is not available fails the start, saying why. Where a write reaches the kernel
 * only with the event loop's next batch, as on io_uring, code that closes a connection must wait
 * for its writes ({@code FrontendHandler.closeAfterWrites}).
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

    /** Why it may not be used here, in a few words (see {@link #reason}); empty when it may. */
    public Optional<String> unavailableBecause() {
        if (isAvailable()) {
            return Optional.empty();
        }
        return Optional.of(reason(this == IO_URING ? IoUring.unavailabilityCause() : Epoll.unavailabilityCause()));
    }

    /**
     * Why a native transport could not be loaded, short: the innermost message of {@code cause}; a
     * refusal by the kernel is named by its errno with what usually causes it (Netty says "failed to
     * create io_uring ring fd: Operation not permitted" where a seccomp profile or
     * {@code kernel.io_uring_disabled} refuses {@code io_uring_setup}, "Function not implemented"
     * where the kernel has no io_uring or a sandbox hides it).
     */
    static String reason(Throwable cause) {
        Throwable innermost = cause;
        while (innermost != null && innermost.getCause() != null && innermost.getMessage() == null) {
            innermost = innermost.getCause();
        }
        if (innermost == null) {
            return "unknown";
        }
        String message = innermost.getMessage();
        if (message == null) {
            return innermost.getClass().getSimpleName();
        }
        if (message.contains("Operation not permitted")) {
            return "EPERM: a seccomp profile, or kernel.io_uring_disabled?";
        }
        if (message.contains("Function not implemented")) {
            return "ENOSYS: a kernel without it, or a sandbox?";
        }
        return message;
    }

    /**
     * What {@link #auto()} takes here, and the words the proxy logs about it.
     *
     * @param transport the first of io_uring, epoll and NIO that this process may use
     * @param note the transport's label, followed, when io_uring was passed over, by why, for
     *     example {@code epoll: io_uring refused here (EPERM: a seccomp profile, or
     *     kernel.io_uring_disabled?), using epoll}
     */
    public record Choice(IoTransport transport, String note) {
    }

    /** The default: io_uring where this process may use it, else epoll, else NIO, with why (see {@link Choice}). */
    public static Choice autoChoice() {
        return choose(IO_URING.unavailableBecause(), EPOLL.unavailableBecause());
    }

    /** {@link #autoChoice()}'s transport. */
    public static IoTransport auto() {
        return autoChoice().transport();
    }

    /**
     * The default's decision from what refused io_uring and epoll (empty: available): apart from the
     * machine, so that each case and its note can be tested.
     */
    static Choice choose(Optional<String> ioUringRefused, Optional<String> epollRefused) {
        if (ioUringRefused.isEmpty()) {
            return new Choice(IO_URING, IO_URING.label);
        }
        String uring = "io_uring refused here (" + ioUringRefused.get() + ")";
        if (epollRefused.isEmpty()) {
            return new Choice(EPOLL, EPOLL.label + ": " + uring + ", using epoll");
        }
        return new Choice(NIO, NIO.label + ": " + uring + ", epoll too (" + epollRefused.get() + "), using nio");
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
                    + "); choose auto, which takes the first available of io_uring, epoll and nio");
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
