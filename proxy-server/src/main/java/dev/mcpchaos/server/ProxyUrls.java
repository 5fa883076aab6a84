package dev.mcpchaos.server;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Inet6Address;
import java.net.URI;

/** URLs of a bound address. */
final class ProxyUrls {

    private ProxyUrls() {
    }

    /** {@code http://host:port/} for a bound address; a wildcard address is reached on loopback. */
    static URI base(InetSocketAddress address) {
        return URI.create("http://" + host(address) + ":" + address.getPort() + "/");
    }

    /** {@code path} on a bound address. */
    static URI on(InetSocketAddress address, String path) {
        if (path == null || !path.startsWith("/")) {
            throw new IllegalArgumentException("path: " + (path == null ? "null" : "'" + path + "'")
                    + " (expected: a path starting with /, such as /mcp)");
        }
        return URI.create("http://" + host(address) + ":" + address.getPort() + path);
    }

    private static String host(InetSocketAddress address) {
        InetAddress ip = address.getAddress();
        if (ip == null) {
            return address.getHostString();
        }
        if (ip.isAnyLocalAddress()) {
            return ip instanceof Inet6Address ? "[::1]" : "127.0.0.1";
        }
        String literal = ip.getHostAddress();
        return ip instanceof Inet6Address ? "[" + literal.replaceFirst("%.*$", "") + "]" : literal;
    }
}
