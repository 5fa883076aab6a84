package dev.mcpchaos.junit.internal;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;

/**
 * {@code java StdioRelay PORT}: relays stdin to 127.0.0.1:PORT and what comes back to stdout,
 * unbuffered, and exits when the proxy ends the connection. Run by an MCP client as if it were
 * the server (see {@link StdioClientSide#clientCommand()}). Not API.
 */
public final class StdioRelay {

    private StdioRelay() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: StdioRelay PORT");
            System.exit(2);
        }
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), Integer.parseInt(args[0]));
        Thread up = new Thread(() -> {
            try {
                System.in.transferTo(socket.getOutputStream());
                socket.shutdownOutput(); // the client closed its end: the proxy reads end of input
            } catch (IOException e) {
                // the proxy went away: the copy below ends too
            }
        }, "relay-up");
        up.setDaemon(true);
        up.start();
        OutputStream out = new FileOutputStream(FileDescriptor.out);
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[8192];
        for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
            out.write(buffer, 0, n);
        }
        System.exit(0);
    }
}
