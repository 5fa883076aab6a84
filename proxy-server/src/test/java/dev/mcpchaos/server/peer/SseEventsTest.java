package dev.mcpchaos.server.peer;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The offline tools read SSE with the proxy's framer: several {@code data} lines are one value
 * joined with {@code \n} (WHATWG "event stream interpretation"), whatever the line ends and
 * however the bytes arrive. The two hand-written readers it replaced disagreed on a first empty
 * {@code data} line (one dropped the {@code \n} after it).
 */
class SseEventsTest {

    private static List<String> read(String stream, int chunk) throws IOException {
        byte[] bytes = stream.getBytes(StandardCharsets.UTF_8);
        // a stream that gives at most `chunk` bytes a read, as a socket may
        InputStream in = new ByteArrayInputStream(bytes) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, chunk));
            }
        };
        List<String> data = new ArrayList<>();
        try (SseEvents events = new SseEvents(in)) {
            String next;
            while ((next = events.next()) != null) {
                data.add(next);
            }
        }
        return data;
    }

    @Test
    void dataLinesAreJoinedWithNewlinesAtEveryChunkSize() throws IOException {
        String stream = ": keep-alive\n\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1}\n\n"
                + "data:\ndata: x\r\n\r\ndata:  two spaces\rdata:y\r\r";
        for (int chunk = 1; chunk <= stream.length(); chunk++) {
            assertThat(read(stream, chunk)).as("chunks of %d bytes", chunk)
                    .containsExactly("{\"jsonrpc\":\"2.0\",\n\"id\":1}", "\nx", " two spaces\ny");
        }
    }

    @Test
    void primingEventsAndAnEventTheStreamEndsInsideAreNotRead() throws IOException {
        assertThat(read("id: p\ndata:\n\nevent: message\ndata: {}\n\ndata: {\"cut\":", 7)).containsExactly("{}");
    }
}
