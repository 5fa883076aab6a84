package dev.mcpchaos.core.codec.jsonrpc;

import dev.mcpchaos.testing.Fragments;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ArgumentsDigest}: the digest is SHA-256 over exactly the bytes of the top-level
 * {@code params.arguments} value as sent, whatever the buffer (heap, direct, composite, a slice
 * with an offset), and null where there are no such arguments or the JSON breaks before their end.
 */
class ArgumentsDigestTest {

    /** The test releases what it allocates itself; tracking these would only slow the every-cut test. */
    private static final ByteBufAllocator ALLOC = Fragments.UNTRACKED;

    // ---------------------------------------------------------------- what is digested

    @Test
    void nestedObjectArguments() {
        String args = "{\"q\":{\"deep\":[1,{\"x\":\"}\"}],\"n\":null},\"list\":[[],{}]}";
        assertDigestOf(args, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                + "\"params\":{\"name\":\"search\",\"arguments\":" + args + "}}");
    }

    @Test
    void argumentsBeforeOtherKeys() {
        String args = "{\"a\":1}";
        assertDigestOf(args, "{\"params\":{\"arguments\":" + args + ",\"name\":\"add\",\"_meta\":{\"progressToken\":7}},"
                + "\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/call\"}");
    }

    @Test
    void argumentsAfterOtherKeysAndAfterParamsSiblings() {
        String args = "[1,2,3]";
        assertDigestOf(args, "{\"id\":1,\"result\":{\"arguments\":\"not these\"},\"jsonrpc\":\"2.0\",\"method\":\"m\","
                + "\"params\":{\"name\":\"t\",\"other\":{\"arguments\":{}},\"arguments\":" + args + "}}");
    }

    @Test
    void scalarArguments() {
        assertDigestOf("\"just a string\"", "{\"method\":\"m\",\"params\":{\"arguments\":\"just a string\"}}");
        assertDigestOf("-12.5e3", "{\"method\":\"m\",\"params\":{\"arguments\":-12.5e3}}");
        assertDigestOf("42", "{\"method\":\"m\",\"params\":{\"arguments\":42 ,\"name\":\"n\"}}");
        assertDigestOf("true", "{\"method\":\"m\",\"params\":{\"arguments\":true}}");
        assertDigestOf("null", "{\"method\":\"m\",\"params\":{\"arguments\":null}\n}");
        assertDigestOf("{}", "{\"method\":\"m\",\"params\":{\"arguments\":{}}}");
    }

    @Test
    void escapedStringsAndUtf8AreDigestedAsSent() {
        String args = "{\"s\":\"quote \\\" backslash \\\\ brace } \\u0041 \\n\",\"\\\"k\\\"\":\"é ✓ 😀\"}";
        assertDigestOf(args, "{\"method\":\"m\",\"params\":{\"arguments\":" + args + "}}");
        String string = "\"a\\\"b\\\\\"";
        assertDigestOf(string, "{\"method\":\"m\",\"params\":{\"arguments\":" + string + ",\"z\":1}}");
    }

    @Test
    void whitespaceInsideTheValueIsPartOfTheDigestAroundItIsNot() {
        String spaced = "{ \"a\" : 1,\n\t\"b\" : [ 2 ] }";
        String compact = "{\"a\":1,\"b\":[2]}";
        String spacedMessage = "{ \"method\" : \"m\" , \"params\" : { \"arguments\" :  " + spaced + "  , \"name\":\"x\" } }";
        assertDigestOf(spaced, spacedMessage);
        // The same arguments written differently are different bytes, so a different digest.
        assertThat(digest(spacedMessage)).isNotEqualTo(digest("{\"method\":\"m\",\"params\":{\"arguments\":" + compact + "}}"));
    }

    @Test
    void theFirstOfRepeatedArgumentsCounts() {
        assertDigestOf("{\"first\":1}", "{\"params\":{\"arguments\":{\"first\":1},\"arguments\":{\"second\":2}}}");
    }

    @Test
    void aMessageThatBreaksAfterTheArgumentsStillHasADigest() {
        assertDigestOf("{\"a\":1}", "{\"params\":{\"arguments\":{\"a\":1},\"name\":");
        assertDigestOf("{\"a\":1}", "{\"params\":{\"arguments\":{\"a\":1}");
    }

    // ---------------------------------------------------------------- no digest

    @Test
    void noArgumentsNoDigest() {
        assertThat(digest("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"cursor\":\"c\"}}")).isNull();
        assertThat(digest("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")).isNull();
        assertThat(digest("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\"arguments\",{}]}")).isNull();
        assertThat(digest("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":null}")).isNull();
    }

    @Test
    void argumentsOutsideTopLevelParamsAreIgnored() {
        assertThat(digest("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"arguments\":{\"a\":1}}}")).isNull();
        assertThat(digest("{\"method\":\"m\",\"params\":{\"inner\":{\"arguments\":{\"a\":1}}}}")).isNull();
        assertThat(digest("{\"method\":\"m\",\"meta\":{\"params\":{\"arguments\":{\"a\":1}}}}")).isNull();
        assertThat(digest("{\"method\":\"m\",\"arguments\":{\"a\":1}}")).isNull();
    }

    @Test
    void aBatchOrScalarHasNoDigest() {
        assertThat(digest("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"arguments\":{\"a\":1}}}]")).isNull();
        assertThat(digest("\"params\"")).isNull();
        assertThat(digest("17")).isNull();
    }

    @Test
    void malformedJsonUpToTheArgumentsHasNoDigest() {
        assertThat(digest("{\"params\":{\"arguments\":{\"a\":1")).isNull();
        assertThat(digest("{\"params\":{\"arguments\":{\"a\":}}}")).isNull();
        assertThat(digest("{\"params\":{\"arguments\":\"unterminated}}")).isNull();
        assertThat(digest("{\"params\":{\"x\":1,,\"arguments\":{}}}")).isNull();
        assertThat(digest("{\"params\" {\"arguments\":{}}}")).isNull();
        assertThat(digest("{params:{\"arguments\":{}}}")).isNull();
        assertThat(digest("{\"params\":{\"arguments\":tru}}")).isNull();
        assertThat(digest("not json at all")).isNull();
        assertThat(digest("")).isNull();
        assertThat(digest("   ")).isNull();
        assertThat(ArgumentsDigest.sha256Hex(null)).isNull();
    }

    // ---------------------------------------------------------------- buffers

    @Test
    void directCompositeAndOffsetBuffersGiveTheSameDigestAndKeepTheirIndexes() {
        String args = "{\"api_key\":\"sk-live-abcdef123456\",\"n\":[1,2]}";
        String message = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":"
                + args + "}}";
        byte[] bytes = message.getBytes(StandardCharsets.UTF_8);
        String expected = sha256(args);

        ByteBuf direct = ALLOC.directBuffer().writeBytes(bytes);
        ByteBuf padded = ALLOC.heapBuffer().writeBytes("junk\n".getBytes(StandardCharsets.UTF_8)).writeBytes(bytes)
                .writeBytes("\njunk".getBytes(StandardCharsets.UTF_8));
        try {
            assertThat(direct.hasArray()).isFalse();
            assertThat(ArgumentsDigest.sha256Hex(direct)).isEqualTo(expected);
            assertThat(direct.readerIndex()).isZero();
            assertThat(direct.writerIndex()).isEqualTo(bytes.length);

            ByteBuf slice = padded.slice(5, bytes.length);
            assertThat(ArgumentsDigest.sha256Hex(slice)).isEqualTo(expected);
            padded.readerIndex(5).writerIndex(5 + bytes.length);
            assertThat(ArgumentsDigest.sha256Hex(padded)).isEqualTo(expected);
            assertThat(padded.readerIndex()).isEqualTo(5);
            assertThat(padded.writerIndex()).isEqualTo(5 + bytes.length);
        } finally {
            direct.release();
            padded.release();
        }

        // Cut into components of every size, alternately heap and direct: the value crosses
        // component boundaries anywhere.
        for (int size = 1; size <= bytes.length; size++) {
            CompositeByteBuf composite = ALLOC.compositeBuffer(Integer.MAX_VALUE);
            try {
                for (int at = 0, i = 0; at < bytes.length; at += size, i++) {
                    int n = Math.min(size, bytes.length - at);
                    ByteBuf piece = i % 2 == 0 ? ALLOC.heapBuffer(n) : ALLOC.directBuffer(n);
                    composite.addComponent(true, piece.writeBytes(bytes, at, n));
                }
                assertThat(ArgumentsDigest.sha256Hex(composite)).as("components of %d bytes", size).isEqualTo(expected);
                assertThat(composite.readerIndex()).isZero();
            } finally {
                composite.release();
            }
        }
    }

    @Test
    void aLongMessagePastTheParsersChunkSize() {
        String pad = "x".repeat(20_000);
        String args = "{\"big\":\"" + "y".repeat(30_000) + "\"}";
        assertDigestOf(args, "{\"pad\":\"" + pad + "\",\"params\":{\"other\":\"" + pad + "\",\"arguments\":" + args + "}}");
    }

    @Test
    void aValueAcrossTheParsersReadChunkBoundary() {
        // Jackson reads a stream 8000 bytes at a time: put each kind of value's first and last
        // byte on every side of that boundary, where a location could be off by one.
        for (String args : new String[] {"12345", "true", "\"str\"", "{\"a\":[1]}", "-0.5"}) {
            for (int pad = 7960; pad <= 8010; pad++) {
                String prefix = "{\"p\":\"";
                String middle = "\",\"params\":{\"arguments\":";
                String filler = "z".repeat(pad - prefix.length() - middle.length());
                assertDigestOf(args, prefix + filler + middle + args + "}}");
            }
        }
    }

    // ---------------------------------------------------------------- helpers

    private static void assertDigestOf(String expectedBytes, String message) {
        assertThat(digest(message)).as(message).isEqualTo(sha256(expectedBytes));
    }

    private static String digest(String message) {
        ByteBuf buf = ALLOC.heapBuffer().writeBytes(message.getBytes(StandardCharsets.UTF_8));
        try {
            return ArgumentsDigest.sha256Hex(buf);
        } finally {
            buf.release();
        }
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
