package dev.mcpchaos.bench.floor;

import dev.mcpchaos.core.transport.IoTransport;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpServerCodec;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What a JVM proxy on Netty costs before it does any work of its own: the floor the CPU of
 * {@code mcp-chaos http} is judged against (issue #16). Each client connection gets one upstream
 * connection on the same event loop, and what one side reads is written to the other, flushed
 * when the read ends, with the reading side paused while the other is not writable.
 *
 * <ul>
 *   <li>{@code raw}: the bytes as they are, nothing parsed;</li>
 *   <li>{@code http}: through Netty's HTTP codec on both sides (the request decoded and encoded
 *       again, the response too), which is what mcp-chaos starts from; no header is changed;</li>
 *   <li>{@code frame}: each message framed by a minimal scan of its own (the end of the head, the
 *       {@code Content-Length}, the body counted off) and relayed as the bytes it arrived as: what
 *       a proxy that parses heads in place, instead of into header objects, would start from.
 *       Only a measurement: it knows no chunked bodies and validates nothing.</li>
 * </ul>
 *
 * Usage takes the proxy's own arguments, so that {@code bench/cpu-side-by-side.sh} can start it
 * in place of the proxy: {@code FloorRelay raw|http|frame --listen 127.0.0.1:PORT --upstream
 * http://127.0.0.1:PORT/mcp [anything else, ignored]}. Prints {@code listening on HOST:PORT}
 * and runs until killed. Loopback only, as every benchmark here. The transport is the proxy's
 * default unless {@code -Dfloor.io=io_uring|epoll|nio} names one.
 */
public final class FloorRelay {

    private FloorRelay() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || !(args[0].equals("raw") || args[0].equals("http") || args[0].equals("frame"))) {
            usage("the first argument is raw, http or frame");
        }
        String mode = args[0];
        String listen = null;
        String upstream = null;
        for (int i = 1; i + 1 < args.length; i++) {
            if (args[i].equals("--listen")) {
                listen = args[++i];
            } else if (args[i].equals("--upstream")) {
                upstream = args[++i];
            }
        }
        if (listen == null || upstream == null) {
            usage("--listen HOST:PORT and --upstream URL are both needed");
        }
        int colon = listen.lastIndexOf(':');
        String listenHost = listen.substring(0, colon);
        int listenPort = Integer.parseInt(listen.substring(colon + 1));
        URI target = URI.create(upstream);
        if (!listenHost.equals("127.0.0.1") || !target.getHost().equals("127.0.0.1")) {
            usage("the floor relay listens on and connects to 127.0.0.1 only");
        }

        // The proxy's own choice unless -Dfloor.io=io_uring|epoll|nio names one: the floor of the
        // proxy's --io io_uring is io_uring's floor, not epoll's.
        IoTransport transport = null;
        try {
            IoTransport named = IoTransport.parse(System.getProperty("floor.io", "auto"));
            transport = named == null ? IoTransport.auto() : named.requireAvailable();
        } catch (IllegalArgumentException | IllegalStateException e) {
            usage("-Dfloor.io: " + e.getMessage());
        }
        EventLoopGroup group = transport.newEventLoopGroup(Integer.getInteger("io.netty.eventLoopThreads", 2), "floor");
        Bootstrap upstreamBootstrap = new Bootstrap()
                .channel(transport.socketChannelType())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.AUTO_READ, false);
        Channel server = new ServerBootstrap()
                .group(group)
                .channel(transport.serverChannelType())
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.AUTO_READ, false)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel client) {
                        addCodec(client, mode, true);
                        client.pipeline().addLast("relay", new ClientSide(upstreamBootstrap, target, mode));
                    }
                })
                .bind(listenHost, listenPort).sync().channel();
        System.err.println("floor relay (" + args[0] + ", " + transport.label() + ") listening on " + listen);
        server.closeFuture().sync(); // the event loops' threads are daemons: main holds the process up
    }

    private static void addCodec(Channel channel, String mode, boolean serverSide) {
        if (mode.equals("http")) {
            channel.pipeline().addLast("http", serverSide ? new HttpServerCodec() : new HttpClientCodec());
        } else if (mode.equals("frame")) {
            channel.pipeline().addLast("frame", new HeadFramer());
        }
    }

    private static void usage(String why) {
        System.err.println("FloorRelay: " + why + "\nusage: FloorRelay raw|http --listen 127.0.0.1:PORT "
                + "--upstream http://127.0.0.1:PORT/PATH");
        System.exit(2);
    }

    /** The client's connection: opens the upstream one, then relays both ways. */
    private static final class ClientSide extends ChannelInboundHandlerAdapter {
        private final Bootstrap bootstrap;
        private final URI target;
        private final String mode;
        private Channel upstream;

        ClientSide(Bootstrap bootstrap, URI target, String mode) {
            this.bootstrap = bootstrap;
            this.target = target;
            this.mode = mode;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            Channel client = ctx.channel();
            Bootstrap connect = bootstrap.clone(client.eventLoop()).handler(new ChannelInitializer<>() {
                @Override
                protected void initChannel(Channel channel) {
                    addCodec(channel, mode, false);
                    channel.pipeline().addLast("relay", new Relay(client));
                }
            });
            connect.connect(target.getHost(), target.getPort()).addListener((ChannelFutureListener) f -> {
                if (!f.isSuccess()) {
                    client.close();
                    return;
                }
                upstream = f.channel();
                ctx.pipeline().replace(this, "relay", new Relay(upstream));
                upstream.read();
                client.read();
            });
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (upstream != null) {
                upstream.close();
            }
        }
    }

    /** Writes what its channel reads to {@code peer}; each side pauses while the other is full. */
    private static final class Relay extends ChannelInboundHandlerAdapter {
        private final Channel peer;

        Relay(Channel peer) {
            this.peer = peer;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ctx.read();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object message) {
            peer.write(message, peer.voidPromise());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            peer.flush();
            if (peer.isWritable()) {
                ctx.read();
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            // This side became writable again: the peer, paused on it, may read on.
            if (ctx.channel().isWritable()) {
                peer.read();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            peer.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /**
     * Cuts the stream into messages the cheapest way that still reads every head: finds the blank
     * line, the {@code Content-Length} among the header lines (compared without case), and passes
     * on each whole message as a slice of what was read.
     */
    private static final class HeadFramer extends ByteToMessageDecoder {
        private static final byte[] CONTENT_LENGTH = "content-length:".getBytes(StandardCharsets.US_ASCII);

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            while (in.isReadable()) {
                int start = in.readerIndex();
                int end = in.writerIndex();
                long bodyLength = 0;
                int lineStart = start;
                int headEnd = -1;
                while (true) {
                    int newline = in.indexOf(lineStart, end, (byte) '\n');
                    if (newline < 0) {
                        return; // the head is not all here yet
                    }
                    int lineLength = newline - lineStart;
                    if (lineLength == 0 || (lineLength == 1 && in.getByte(lineStart) == '\r')) {
                        headEnd = newline + 1;
                        break;
                    }
                    if (lineLength > CONTENT_LENGTH.length && startsWithContentLength(in, lineStart)) {
                        bodyLength = 0;
                        for (int i = lineStart + CONTENT_LENGTH.length; i < newline; i++) {
                            byte b = in.getByte(i);
                            if (b >= '0' && b <= '9') {
                                bodyLength = bodyLength * 10 + (b - '0');
                            }
                        }
                    }
                    lineStart = newline + 1;
                }
                long messageLength = headEnd - start + bodyLength;
                if (in.readableBytes() < messageLength) {
                    return;
                }
                out.add(in.readRetainedSlice((int) messageLength));
            }
        }

        private static boolean startsWithContentLength(ByteBuf in, int at) {
            for (int i = 0; i < CONTENT_LENGTH.length; i++) {
                if ((in.getByte(at + i) | 0x20) != CONTENT_LENGTH[i]) {
                    return false;
                }
            }
            return true;
        }
    }
}
