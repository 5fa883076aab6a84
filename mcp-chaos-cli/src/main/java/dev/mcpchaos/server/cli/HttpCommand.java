package dev.mcpchaos.server.cli;

import dev.mcpchaos.core.config.Units;
import dev.mcpchaos.core.transport.IoTransport;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.server.HttpProxyBuilder;
import dev.mcpchaos.server.ProxyStartException;
import dev.mcpchaos.server.McpChaosProxy;
import dev.mcpchaos.server.live.LiveConsole;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/** {@code mcp-chaos http --listen HOST:PORT --upstream URL}. */
@Command(name = "http",
        mixinStandardHelpOptions = true,
        description = {"Proxy MCP's Streamable HTTP transport: listen for clients and relay to the upstream MCP server, "
                + "message by message; SSE responses are streamed event by event.",
            "Every request's path passes unchanged to the upstream: the path of --upstream is not prepended, it is "
                    + "where clients must point on the proxy too (--upstream http://127.0.0.1:3001/mcp: clients use "
                    + "http://LISTEN/mcp). The proxy logs that URL at start."},
        footer = {"", "Example:", "  mcp-chaos http --listen 127.0.0.1:8080 --upstream http://127.0.0.1:3001/mcp"})
final class HttpCommand implements Callable<Integer> {

    @Option(names = "--listen", paramLabel = "HOST:PORT", required = true,
            description = "Where clients connect, such as 127.0.0.1:8080 (port 0: any free port).")
    String listen;

    @Option(names = "--upstream", paramLabel = "URL", required = true,
            description = "The MCP server, such as http://127.0.0.1:3001/mcp or https://mcp.example.com/mcp. Its path "
                    + "is where clients point on the proxy too: paths pass unchanged.")
    String upstream;

    @Option(names = "--rewrite-host", description = "Send the upstream's host in Host instead of the client's.")
    boolean rewriteHost;

    @Option(names = "--trust-ca", paramLabel = "PEM", description = "Trust upstream certificates issued by this CA.")
    Path trustCa;

    @Option(names = "--insecure-trust-any-certificate",
            description = "Accept any upstream certificate. Only for test servers: it gives up TLS's protection.")
    boolean trustAny;

    @Option(names = "--max-request-body", paramLabel = "SIZE", defaultValue = "16MiB",
            description = "Largest POST body; larger ones are answered 413. Default: ${DEFAULT-VALUE}.")
    String maxRequestBody;

    @Option(names = "--max-buffered", paramLabel = "SIZE",
            description = "Most bytes of bodies held for all clients at once (POST bodies being read or held by a fault, JSON answers being gathered); past it a new POST is answered 503 with Retry-After and a JSON answer passes uninspected. Default: half the JVM's maximum heap.")
    String maxBuffered;

    @Option(names = "--io", paramLabel = "TRANSPORT", defaultValue = "auto",
            description = "How the proxy's sockets talk to the kernel: auto (io_uring, about a quarter less CPU per request; "
                    + "where the kernel or a seccomp profile refuses it, epoll, and the start-up log line says why), "
                    + "io_uring, epoll or nio. Default: ${DEFAULT-VALUE}.")
    String io;

    @Option(names = "--max-sse-event", paramLabel = "SIZE", defaultValue = "16MiB",
            description = "Largest SSE event rules may act on; a larger one is dropped and logged then. While no rule acts on a stream its events are relayed as they come, and one over the limit is only logged. Default: ${DEFAULT-VALUE}.")
    String maxSseEvent;

    @Option(names = "--max-connections", paramLabel = "N", defaultValue = "10000",
            description = "Most client connections at once; more are answered 503. Default: ${DEFAULT-VALUE}.")
    int maxConnections;

    @Option(names = "--response-timeout", paramLabel = "DURATION", defaultValue = "5m",
            description = "Time for the upstream to start answering; then 504. Default: ${DEFAULT-VALUE}.")
    String responseTimeout;

    @Option(names = "--response-body-timeout", paramLabel = "DURATION", defaultValue = "60s",
            description = "Longest wait between two pieces of a response body that is not an SSE stream; then 504, or a cut "
                    + "connection once the body began. SSE streams have no such deadline. Default: ${DEFAULT-VALUE}.")
    String responseBodyTimeout;

    @Option(names = "--idle-timeout", paramLabel = "DURATION", defaultValue = "5m",
            description = "Time a client connection is kept between requests; only a finished request starts it over. "
                    + "Default: ${DEFAULT-VALUE}.")
    String idleTimeout;

    @Option(names = "--session-idle-timeout", paramLabel = "DURATION", defaultValue = "30m",
            description = "Time an MCP session with no request or stream in progress is kept; then the proxy forgets it "
                    + "(its later requests pass on as if never seen). Default: ${DEFAULT-VALUE}.")
    String sessionIdleTimeout;

    @Option(names = "--request-head-timeout", paramLabel = "DURATION", defaultValue = "10s",
            description = "Time from the first byte of a request head to its end; then 408 and the connection closed. "
                    + "Default: ${DEFAULT-VALUE}.")
    String requestHeadTimeout;

    @Option(names = "--request-body-timeout", paramLabel = "DURATION", defaultValue = "60s",
            description = "Time from the end of a request head to the last byte of its body; then 408 and the "
                    + "connection closed. Default: ${DEFAULT-VALUE}.")
    String requestBodyTimeout;

    @Option(names = "--min-request-body-rate", paramLabel = "SIZE/s", defaultValue = "500B/s",
            description = "The least a request body must average after its first second; then 408 and the connection "
                    + "closed. 0 for no minimum. Default: ${DEFAULT-VALUE}.")
    String minRequestBodyRate;

    @Option(names = "--send-timeout", paramLabel = "DURATION", defaultValue = "60s",
            description = "The longest a client may take nothing the proxy writes to it (the connection stays "
                    + "unwritable); then the connection is closed. Default: ${DEFAULT-VALUE}.")
    String sendTimeout;


    @Option(names = "--max-sessions", paramLabel = "N", defaultValue = "10000",
            description = "Most MCP sessions kept at once; past that the least recently used is forgotten. "
                    + "Default: ${DEFAULT-VALUE}.")
    int maxSessions;

    @Option(names = "--drain-timeout", paramLabel = "DURATION", defaultValue = "20s",
            description = "On SIGTERM, how long requests and SSE streams in flight get to finish, while no new "
                    + "connection is taken and /ready answers 503; then SSE streams get a final comment and a clean "
                    + "end, requests not yet answered a 503, and the proxy exits 0. 0s: end them at once. "
                    + "Default: ${DEFAULT-VALUE}.")
    String drainTimeout;

    @Option(names = "--ready-requires-upstream",
            description = "The operations listener's /ready also asks that the upstream take connections (checked "
                    + "every 2s, each within 1s). By default it is ready once listening and not draining.")
    boolean readyRequiresUpstream;

    @CommandLine.Mixin
    ChaosOptions chaos = new ChaosOptions().controlByDefault(DEFAULT_CONTROL);

    /** Where the control API listens unless --control says otherwise. */
    static final String DEFAULT_CONTROL = "127.0.0.1:9090";

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Counted down by SIGTERM and SIGINT (and by a test, as SIGINT would): the proxy then stops. */
    final CountDownLatch stop = new CountDownLatch(1);

    @Override
    public Integer call() throws Exception {
        return chaos.runWithLiveView(this::run);
    }

    private int run(LiveConsole live) throws Exception {
        HttpProxyBuilder.RunningHttp running;
        try {
            running = start(live);
        } catch (RuleFileException e) {
            return StdioCommand.notStarted(e);
        } catch (ProxyStartException e) {
            System.err.println("mcp-chaos: " + e.getMessage()
                    + (e.reason() == ProxyStartException.Reason.ADDRESS && e.getMessage() != null
                    && e.getMessage().contains("control") ? " (give --control HOST:PORT "
                    + "for another address, or --control off)" : ""));
            return StdioCommand.exitCode(e);
        }
        Duration drain = drainTimeout(); // checked in start(): valid here
        AtomicBoolean terminated = new AtomicBoolean();
        int code = 0;
        try (HttpProxyBuilder.RunningHttp proxy = running) {
            if (live != null) {
                live.start(proxy.rules());
            }
            StopSignals.handle(name -> {
                terminated.compareAndSet(false, name.equals("TERM"));
                stop.countDown();
            });
            stop.await();
            if (terminated.get()) {
                // SIGTERM is how an orchestrator stops a pod: what is in flight gets to finish.
                proxy.drain(drain);
            }
        } finally {
            code = chaos.checks.finish(System.err, code, running); // after the close: the referee has seen everything
        }
        return code;
    }

    /**
     * Starts the proxy these options describe and logs the URL clients must use.
     *
     * @param live the live view, or null
     * @throws OptionValueException for an option's value that cannot be used
     * @throws RuleFileException when the rule file is refused
     * @throws ProxyStartException when the proxy cannot start (an address in use, a rule for stdio only)
     */
    HttpProxyBuilder.RunningHttp start(LiveConsole live) {
        URI upstreamUrl = parseUpstream(upstream);
        HttpProxyBuilder builder;
        try {
            builder = McpChaosProxy.http(upstreamUrl)
                    .listen(parseListen(listen))
                    .rewriteHost(rewriteHost)
                    .trustAnyCertificate(trustAny)
                    .maxRequestBody(toInt(Units.parseSize(maxRequestBody), "--max-request-body"))
                    .maxSseEventSize(toInt(Units.parseSize(maxSseEvent), "--max-sse-event"))
                    .maxConnections(maxConnections)
                    .responseTimeout(Units.parseDuration(responseTimeout))
                    .responseBodyTimeout(Units.parseDuration(responseBodyTimeout))
                    .idleTimeout(Units.parseDuration(idleTimeout))
                    .sessionIdleTimeout(positive(sessionIdleTimeout, "--session-idle-timeout"))
                    .maxSessions(atLeastOne(maxSessions, "--max-sessions"))
                    .requestHeadTimeout(Units.parseDuration(requestHeadTimeout))
                    .requestBodyTimeout(Units.parseDuration(requestBodyTimeout))
                    .minRequestBodyRate(parseRate(minRequestBodyRate))
                    .sendTimeout(Units.parseDuration(sendTimeout))
                    .readyRequiresUpstream(readyRequiresUpstream);
            drainTimeout();
            IoTransport transport = IoTransport.parse(io);
            builder.io(transport == null ? null : transport.requireAvailable());
            if (trustCa != null) {
                builder.trustedCa(trustCa);
            }
            if (maxBuffered != null) {
                long bytes = Units.parseSize(maxBuffered);
                if (bytes < 1) {
                    throw new IllegalArgumentException("--max-buffered: " + bytes + " bytes (expected: at least 1B)");
                }
                builder.maxBuffered(bytes);
            }
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new OptionValueException(e.getMessage());
        }
        chaos.applyTo(builder, live);
        if (chaos.rules != null) {
            builder.rules(chaos.rules);
        }
        HttpProxyBuilder.RunningHttp running = builder.start();
        // Asked for here, not in a static field: picocli loads this class while logging is still being set up.
        LoggerFactory.getLogger(HttpCommand.class).info(clientsLine(running.address(), upstreamUrl));
        return running;
    }

    /**
     * The --upstream URL: http or https, with a host, without a query, a fragment or user info
     * (the proxy would drop them without a word: clients' query strings and Authorization pass
     * unchanged instead).
     */
    static URI parseUpstream(String text) {
        URI url;
        try {
            url = new URI(text);
        } catch (URISyntaxException e) {
            throw badUpstream(text, "", "");
        }
        String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw badUpstream(text, "", "");
        }
        if (url.getHost() == null) {
            throw badUpstream(text, " with a host", "");
        }
        if (url.getPort() == 0 || url.getPort() > 65535) {
            throw badUpstream(text, " with a port from 1 to 65535, or none", "");
        }
        if (url.getRawQuery() != null) {
            throw badUpstream(text, " without a query", "; clients' query strings pass unchanged");
        }
        if (url.getRawFragment() != null) {
            throw badUpstream(text, " without a fragment", "");
        }
        if (url.getRawUserInfo() != null) {
            throw badUpstream(text, " without user info", "; clients' Authorization header passes unchanged");
        }
        return url;
    }

    private static OptionValueException badUpstream(String text, String kind, String note) {
        return new OptionValueException("--upstream: '" + text + "' (expected: an http:// or https:// URL" + kind
                + " such as http://127.0.0.1:3001/mcp" + note + ")");
    }

    /**
     * The line that tells where clients must point: the proxy's address with the upstream URL's
     * path, since request paths pass unchanged and the upstream's path is not prepended.
     */
    static String clientsLine(InetSocketAddress listening, URI upstream) {
        String host = listening.getAddress() != null && listening.getAddress().isAnyLocalAddress()
                ? "<this host>" : listening.getHostString();
        if (host.indexOf(':') >= 0) {
            host = "[" + host + "]"; // IPv6
        }
        boolean noPath = upstream.getRawPath() == null || upstream.getRawPath().isEmpty();
        String path = noPath ? "/" : upstream.getRawPath();
        String to = noPath ? upstream + "/" : upstream.toString();
        return "clients: http://" + host + ":" + listening.getPort() + path + " -> " + to + " (paths pass unchanged)";
    }

    /** {@code HOST:PORT}, {@code :PORT} (all interfaces) or {@code [v6]:PORT}. */
    static InetSocketAddress parseListen(String text) {
        return parseAddress("--listen", text);
    }

    /** {@code HOST:PORT}, {@code :PORT} (all interfaces) or {@code [v6]:PORT}, for {@code option}. */
    static InetSocketAddress parseAddress(String option, String text) {
        int colon = text.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException(option + ": '" + text + "' (expected: HOST:PORT, such as 127.0.0.1:8080)");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(option + ": '" + text + "' (expected: a port from 0 to 65535)");
        }
        return host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
    }

    /** {@code --drain-timeout}: a duration, 0 or more. */
    Duration drainTimeout() {
        try {
            Duration timeout = Units.parseDuration(drainTimeout);
            if (!timeout.isNegative()) {
                return timeout;
            }
        } catch (IllegalArgumentException e) {
            // answered below
        }
        throw new IllegalArgumentException("--drain-timeout: '" + drainTimeout
                + "' (expected: a duration such as 20s or 1m, or 0s)");
    }

    /** A duration over zero, or an error that names the option and the value as given. */
    static Duration positive(String text, String option) {
        Duration duration;
        try {
            duration = Units.parseDuration(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + ": '" + text + "' (expected: a number and a unit, such as 30s, "
                    + "30m, 1h)");
        }
        if (duration.isZero() || duration.isNegative()) {
            throw new IllegalArgumentException(option + ": '" + text + "' (expected: > 0)");
        }
        return duration;
    }

    static int atLeastOne(int value, String option) {
        if (value < 1) {
            throw new IllegalArgumentException(option + ": " + value + " (expected: >= 1)");
        }
        return value;
    }

    /** {@code --min-request-body-rate}: a size per second, such as {@code 500B/s} or {@code 1KiB} (the "/s" may go). */
    static long parseRate(String text) {
        String size = text.trim();
        if (size.endsWith("/s")) {
            size = size.substring(0, size.length() - 2);
        }
        try {
            return Units.parseSize(size);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--min-request-body-rate: '" + text
                    + "' (expected: a size per second, such as 500B/s or 1KiB/s, or 0)");
        }
    }

    private static int toInt(long size, String option) {
        if (size < 1 || size > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(option + ": " + size + " bytes (expected: 1B to 2GiB)");
        }
        return (int) size;
    }
}
