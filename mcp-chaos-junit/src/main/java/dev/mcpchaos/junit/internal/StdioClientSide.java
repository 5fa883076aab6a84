package dev.mcpchaos.junit.internal;

import dev.mcpchaos.server.ChildJvm;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The client side of an in-process stdio proxy, on a loopback socket: MCP clients that only talk
 * to a child process (the MCP Java SDK's {@code StdioClientTransport}) run {@link #clientCommand()},
 * a small Java relay between its stdin/stdout and this socket. One client connects, once. Not API.
 */
public final class StdioClientSide implements AutoCloseable {

    private final ServerSocket listener;
    private final CompletableFuture<Socket> socket = new CompletableFuture<>();

    public StdioClientSide() {
        try {
            listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on 127.0.0.1 for the stdio client", e);
        }
        Thread accept = new Thread(() -> {
            try {
                socket.complete(listener.accept());
            } catch (IOException e) {
                socket.completeExceptionally(e);
            }
        }, "mcp-chaos-stdio-client-accept");
        accept.setDaemon(true);
        accept.start();
    }

    /** The command that connects a client's stdin and stdout to the proxy: {@code java ... StdioRelay PORT}. */
    public List<String> clientCommand() {
        return ChildJvm.command(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                StdioRelay.class.getName(), Integer.toString(listener.getLocalPort()));
    }

    /** What the proxy reads as its client's messages: end of input when no client came before {@link #close()}. */
    public InputStream proxyInput() {
        return new InputStream() {
            private InputStream in;

            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                try {
                    if (in == null) {
                        in = connected().getInputStream();
                    }
                    return in.read(b, off, len);
                } catch (IOException e) {
                    return -1; // no client, or closed: the proxy sees its input end and shuts down
                }
            }
        };
    }

    /** Where the proxy writes to its client. */
    public OutputStream proxyOutput() {
        return new OutputStream() {
            private OutputStream out;

            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                if (out == null) {
                    out = connected().getOutputStream();
                }
                out.write(b, off, len);
            }

            @Override
            public void flush() throws IOException {
                if (out != null) {
                    out.flush();
                }
            }

            @Override
            public void close() throws IOException {
                if (out != null) {
                    out.close();
                }
            }
        };
    }

    private Socket connected() throws IOException {
        try {
            return socket.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the stdio client");
        } catch (ExecutionException e) {
            throw new IOException("no stdio client", e.getCause());
        }
    }

    /** Disconnects the client (or stops waiting for one). */
    @Override
    public void close() {
        socket.completeExceptionally(new IOException("the proxy is closing"));
        try {
            if (!socket.isCompletedExceptionally()) {
                socket.join().close();
            }
            listener.close();
        } catch (IOException ignored) {
            // closing: nothing more to do
        }
    }
}
