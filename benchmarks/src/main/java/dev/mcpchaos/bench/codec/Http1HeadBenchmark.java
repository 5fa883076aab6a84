package dev.mcpchaos.bench.codec;

import dev.mcpchaos.core.codec.http1.HeadScanner;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.util.ReferenceCountUtil;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What reading one message head costs, Netty's decoder against {@link HeadScanner} (#16): the
 * head of the {@code tools/call} POST that {@code bench/http-throughput.sh} sends ({@code
 * message=request}), or of nginx's answer to it ({@code message=response}), with its body, in a direct
 * buffer as the epoll transport reads it. The {@code bytes} counter counts the head's bytes only.
 *
 * <ul>
 *   <li>{@code netty}: {@code HttpRequestDecoder} (or {@code HttpResponseDecoder}) decodes the
 *       message into its head object, headers and body slice, as the proxy's pipeline does for
 *       every request and answer; the objects are released;</li>
 *   <li>{@code scanner}: {@link HeadScanner#scan(ByteBuf)} finds the head's end, checks it and
 *       records its fields' offsets; no object is made.</li>
 * </ul>
 *
 * The scanner does less than the decoder (no body slice, no header objects): the difference is
 * an upper bound of what the proxy's codecs save on each head they read in place.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m"})
public class Http1HeadBenchmark {

    private static final String BODY =
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"ping\"}}}";
    private static final String ANSWER =
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"pong\"}],\"isError\":false}}";

    /** Which head: the POST's or the answer's (named as the other codec benchmarks name theirs). */
    @Param({"request", "response"})
    public String message;

    /** Always direct, as epoll reads; a parameter so that bench/codecs.sh's table shows it. */
    @Param({"direct"})
    public String buffer;

    private ByteBuf bytes;
    private int headLength;
    private ExposedDecoder decoder;
    private EmbeddedChannel channel;
    private ChannelHandlerContext ctx;
    private final List<Object> out = new ArrayList<>();
    private HeadScanner scanner;

    /** Netty's decoder with its {@code decode} callable, as its pipeline would call it. */
    static final class ExposedDecoder {
        private final ByteToMessageDecoder decoder;
        private final Decode decode;

        interface Decode {
            void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception;
        }

        static final class Requests extends HttpRequestDecoder {
            Requests(HttpDecoderConfig config) {
                super(config);
            }

            void decodeOnce(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
                decode(ctx, in, out);
            }
        }

        static final class Responses extends HttpResponseDecoder {
            Responses(HttpDecoderConfig config) {
                super(config);
            }

            void decodeOnce(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
                decode(ctx, in, out);
            }
        }

        ExposedDecoder(boolean request, HttpDecoderConfig config) {
            if (request) {
                Requests d = new Requests(config);
                decoder = d;
                decode = d::decodeOnce;
            } else {
                Responses d = new Responses(config);
                decoder = d;
                decode = d::decodeOnce;
            }
        }
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        if (!buffer.equals("direct")) {
            throw new IllegalArgumentException("buffer: " + buffer + " (expected: direct)");
        }
        boolean request = switch (message) {
            case "request" -> true;
            case "response" -> false;
            default -> throw new IllegalArgumentException("message: " + message + " (expected: request or response)");
        };
        String text = request
                ? "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:19192\r\nContent-Type: application/json\r\n"
                        + "Accept: application/json, text/event-stream\r\nContent-Length: " + BODY.length() + "\r\n\r\n"
                : "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Fri, 04 Dec 2026 20:00:00 GMT\r\n"
                        + "Content-Type: application/json\r\nContent-Length: " + ANSWER.length()
                        + "\r\nConnection: keep-alive\r\n\r\n";
        headLength = text.length();
        byte[] bytes = (text + (request ? BODY : ANSWER)).getBytes(StandardCharsets.US_ASCII);
        this.bytes = Unpooled.directBuffer(bytes.length).writeBytes(bytes);
        // The proxy's limits (HttpProxy: 8192 for the start line, the configured header size).
        HttpDecoderConfig config = new HttpDecoderConfig().setMaxInitialLineLength(8192).setMaxHeaderSize(8192);
        decoder = new ExposedDecoder(request, config);
        channel = new EmbeddedChannel(decoder.decoder);
        ctx = channel.pipeline().context(decoder.decoder);
        scanner = request ? HeadScanner.forRequests(8192, 128) : HeadScanner.forResponses(8192, 128);
        Throughput unused = new Throughput();
        int made = netty(unused);
        int scanned = scanner(unused);
        if (made != 2 || scanned != headLength) {
            throw new IllegalStateException("the " + message + " decoded into " + made + " objects (expected: the head and"
                    + " its last content), and scanned as " + scanned + " bytes of head (expected: " + headLength + ")");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        channel.finishAndReleaseAll();
        bytes.release();
    }

    /** Decodes the whole message; returns how many objects it made (the head, the body as last content). */
    @Benchmark
    public int netty(Throughput counters) throws Exception {
        counters.bytes += headLength;
        counters.messages++;
        bytes.readerIndex(0);
        out.clear();
        while (bytes.isReadable()) {
            int before = bytes.readerIndex();
            decoder.decode.decode(ctx, bytes, out);
            if (bytes.readerIndex() == before) {
                break;
            }
        }
        int made = out.size();
        for (Object o : out) {
            ReferenceCountUtil.release(o);
        }
        return made;
    }

    /** Scans the head; returns its length. */
    @Benchmark
    public int scanner(Throughput counters) {
        counters.bytes += headLength;
        counters.messages++;
        bytes.readerIndex(0); // as netty() does: the same work on the way in
        return scanner.scan(bytes);
    }
}
