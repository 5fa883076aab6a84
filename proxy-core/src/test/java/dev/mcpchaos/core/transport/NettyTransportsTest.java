package dev.mcpchaos.core.transport;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP proxy sets no {@code TCP_NODELAY} of its own on the sockets it accepts or opens (a
 * system call per connection): it relies on the transport's default, which this pins. Were a
 * Netty upgrade to turn it off, every small response would wait for Nagle's algorithm.
 */
class NettyTransportsTest {

    @Test
    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    void acceptedAndConnectedSocketsHaveNagleOffByDefault() throws Exception {
        EventLoopGroup group = NettyTransports.newEventLoopGroup(1, "nodelay-test");
        try {
            CompletableFuture<Boolean> accepted = new CompletableFuture<>();
            Channel server = new ServerBootstrap().group(group).channel(NettyTransports.serverChannelType())
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            accepted.complete(ch.config().getOption(ChannelOption.TCP_NODELAY));
                        }
                    })
                    .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            Channel client = new Bootstrap().group(group).channel(NettyTransports.socketChannelType())
                    .handler(new ChannelInboundHandlerAdapter())
                    .connect(server.localAddress()).sync().channel();

            assertThat(client.config().getOption(ChannelOption.TCP_NODELAY)).as("a connected socket").isTrue();
            assertThat(accepted.get(5, TimeUnit.SECONDS)).as("an accepted socket").isTrue();
            client.close().sync();
            server.close().sync();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
