package dev.mcpchaos.core.codec.http1;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.mcpchaos.testing.Cuts;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpServerCodec;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Coverage-guided search (Jazzer; see docs/fuzzing.md) for a byte stream that
 * {@link Http1ServerCodec} or {@link Http1ClientCodec} reads otherwise than the Netty codec it
 * replaces: any bytes as requests, and as responses to four requests whose methods (POST, HEAD,
 * CONNECT, GET) the input's first byte picks, cut every way of {@link Cuts}. What each hands on,
 * what each writes back and whether it closes must be the same (see {@link Http1CodecsTest}).
 */
class Http1CodecsFuzzTest {

    @DictionaryEntries({"\\x0D\\x0A", "\\x0A", "\\x0D", "POST /mcp HTTP/1.1\\x0D\\x0A", "HTTP/1.1 200 OK\\x0D\\x0A",
        "Content-Length: ", "Transfer-Encoding: chunked\\x0D\\x0A", "HEAD", "HTTP/1.0", "0\\x0D\\x0A\\x0D\\x0A", ": "})
    @FuzzTest
    void readsAsNettysCodecs(byte[] input) {
        for (List<byte[]> chunks : Cuts.of(input)) {
            Http1CodecsTest.Side ours = Http1CodecsTest.serve(
                    new EmbeddedChannel(new Http1ServerCodec(Http1CodecsTest.config(), Http1CodecsTest.LIMIT)), chunks);
            Http1CodecsTest.Side netty = Http1CodecsTest.serve(
                    new EmbeddedChannel(new HttpServerCodec(Http1CodecsTest.config())), chunks);
            assertThat(ours).as("as requests, %d chunks", chunks.size()).isEqualTo(netty);

            List<HttpMethod> methods = new ArrayList<>();
            int picks = input.length == 0 ? 0 : input[0] & 0xff;
            HttpMethod[] kinds = {HttpMethod.POST, HttpMethod.HEAD, HttpMethod.CONNECT, HttpMethod.GET};
            for (int i = 0; i < 4; i++) {
                methods.add(kinds[picks >> (2 * i) & 3]);
            }
            Http1CodecsTest.Side oursUp = Http1CodecsTest.fetch(
                    new EmbeddedChannel(new Http1ClientCodec(Http1CodecsTest.config(), 4096)), methods, chunks, true);
            Http1CodecsTest.Side nettyUp = Http1CodecsTest.fetch(
                    new EmbeddedChannel(new HttpClientCodec(Http1CodecsTest.config(), false, false)), methods, chunks, false);
            assertThat(oursUp).as("as responses to %s, %d chunks", methods, chunks.size()).isEqualTo(nettyUp);
        }
    }
}
