package dev.mcpchaos.core.codec.jsonrpc;

import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.testing.Fragments;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link EnvelopeSniffer#sniff}'s fast path ({@link FastEnvelopeScanner}) against the parser alone:
 * for every input the envelope must be equal in every field, kind and malformed reason included.
 * Inputs: every string literal of {@link EnvelopeSnifferTest}, realistic MCP messages, and a seeded
 * generator of valid JSON-RPC messages (odd ids, escapes, non-ASCII, duplicates, batches, deep
 * nesting) and of broken ones (bytes flipped, deleted, inserted, cut; bad escapes and numbers,
 * control characters, invalid UTF-8, trailing commas, unclosed nesting, two roots).
 *
 * <p>Both sniffers are shared across all inputs, as a relay uses one, so state left by one
 * message (the fast path skipping the parser, the parser kept between messages) is covered too.
 * Each input goes through the scanner on its own as well: when it answers, it must be right.
 * The inputs reach the fast sniffer in turn as a heap buffer, a byte range and a direct buffer.
 * The number of cases is fixed by default ({@value #DEFAULT_CASES}; a few seconds), and can be
 * raised for a longer run with {@code -Dsniff.differential.cases=N}; {@code -Dsniff.differential.seed=S}
 * draws other inputs.
 */
class EnvelopeSnifferDifferentialTest {

    private static final int DEFAULT_CASES = 200_000;
    private static final long SEED = 6_2026L;

    /** Every string literal of EnvelopeSnifferTest (messages, and fragments of messages). */
    private static final String[] TEST_LITERALS = {
            "(any reason)",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"," + "\"params\":{\"name\":\"search\",\"arguments\":{\"q\":\"x\"}}}",
            "2.0",
            "tools/call",
            "search",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"," + "\"params\":{\"progressToken\":\"t\",\"progress\":0.5}}",
            "notifications/progress",
            "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"result\":{\"content\":[{\"type\":\"text\"," + "\"text\":\"hi\"}],\"name\":\"not params\"}}",
            "abc",
            "null",
            "0",
            "\"s\"",
            "true",
            "[]",
            "[1,{\"a\":2}]",
            "{}",
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":",
            "}",
            "result %s",
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32601,\"message\":\"no\"}}",
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"parse\"}}",
            "{\"error\":null}",
            "{\"jsonrpc\":\"2.0\"}",
            "{\"jsonrpc\":\"2.0\",\"result\":{}}",
            "{\"jsonrpc\":\"2.0\",\"id\":9}",
            "{\"jsonrpc\":2.0,\"id\":1,\"method\":7,\"params\":{\"name\":5}}",
            "{\"id\":1,\"method\":{\"x\":\"tools/call\"}}",
            "{\"id\":1,\"method\":\"m\",\"params\":{\"name\":[\"a\"]}}",
            "{\"id\":1,\"method\":\"m\",\"params\":{\"name\":{\"name\":\"a\"}}}",
            "42",
            "-1.5e3",
            "\"abc\"",
            "false",
            " 7 ",
            "\"\"",
            "",
            " ",
            "\t",
            "   \t  ",
            "\r",
            " \r",
            "'%s'",
            "\"jsonrpc\":\"2.0\"",
            "\"id\":12",
            "\"method\":\"tools/call\"",
            "\"params\":{\"arguments\":{\"name\":\"deep\"},\"name\":\"search_docs\",\"_meta\":{\"name\":\"m\"}}",
            "search_docs",
            "{",
            ",",
            "order %s",
            "{\"id\":1,\"method\":\"tools/call\",\"params\":{\"arguments\":{\"name\":\"deep\"}}}",
            "{\"id\":1,\"method\":\"tools/call\",\"params\":{\"arguments\":{\"name\":\"deep\"}," + "\"name\":\"right\"}}",
            "right",
            "{\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"right\"," + "\"arguments\":{\"name\":\"deep\",\"x\":{\"name\":\"deeper\"}}}}",
            "{\"id\":1,\"method\":\"m\",\"params\":{\"list\":[{\"name\":\"in array\"},[\"name\"]]}}",
            "{\"id\":1,\"method\":\"m\",\"params\":[{\"name\":\"positional\"}]}",
            "name",
            "{\"id\":1,\"method\":\"m\",\"name\":\"top\"}",
            "{\"id\":1,\"result\":{\"name\":\"r\"},\"params\":{}}",
            "{\"id\":1,\"method\":\"m\",\"x\":{\"params\":{\"name\":\"nested params\"}}}",
            "{\"method\":\"notifications/message\",\"params\":{\"id\":5,\"method\":\"x\"," + "\"result\":1,\"error\":{},\"data\":{\"id\":6,\"jsonrpc\":\"1.0\"}}}",
            "notifications/message",
            "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\\nc\",\"method\":\"to\\\"ols\\\\call\"," + "\"params\":{\"text\":\"}{\\\"id\\\":99,\\\"name\\\":\\\"fake\\\"}\\n\",\"name\":\"re\\u0061l\\n\\t\\/\"}}",
            "a\"b\nc",
            "to\"ols\\call",
            "real\n\t/",
            "{\"id\":\"[{\\\"\",\"method\":\"m]}\",\"params\":{\"a\":\"\\\\\",\"name\":\"]\"}}",
            "[{\"",
            "m]}",
            "]",
            "r\u00e9sum\u00e9_\u691c\u7d22_\ud83d\udd0d_\ud83d\ude00",
            "{\"jsonrpc\":\"2.0\",\"id\":\"\u4e00\u4e8c\",\"method\":\"tools/call\"," + "\"params\":{\"arguments\":{\"q\":\"\ud83e\udd16\u00fc\"},\"name\":\"",
            "\"}}",
            "\u4e00\u4e8c",
            "{\"\u540d\":1,\"id\":1,\"method\":\"m\",\"params\":{\"name\":\"\\ud83d\\udd0d\"}}",
            "\ud83d\udd0d",
            "\u00e9\ud83d\ude00x",
            "{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{\"text\":\"",
            "\"},\"method2\":\"\"}",
            "7",
            "\"7\"",
            "-3",
            "9223372036854775808",
            "123456789012345678901234567890",
            "1.5",
            "1e3",
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}",
            "{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{}}",
            "{\"id\":null,\"method\":\"m\"}",
            "{\"method\":\"m\"}",
            "{\"id\":{\"x\":1},\"method\":\"m\"}",
            "{\"id\":[1],\"result\":1}",
            "{\"id\":true,\"method\":\"m\"}",
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"," + "\"arguments\":{\"name\":\"no\"}}}," + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}," + "{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"result\":{\"id\":5}}," + "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":1,\"message\":\"m\"}}," + "5,\"s\",[{\"id\":9,\"method\":\"deeper\"}],null,{}]",
            "a",
            "notifications/cancelled",
            "r",
            " [ ] ",
            "[{\"id\":1,\"method\":\"a\"},",
            "[{\"id\":1,\"method\":\"a\"}",
            "[{\"id\":1,\"method\":\"a\"}]]",
            "[{\"id\":1,\"method\":\"a\"}][]",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x",
            "{\"id\":1,\"params\":[1,2}",
            "{\"id\":1,\"params\":{\"a\":1}",
            "{\"id\":1]",
            "hello",
            "Content-Length: 12",
            "{\"id\":NaN,\"method\":\"m\"}",
            "{\"id\":1,\"result\":Infinity}",
            "{\"id\":1,\"result\":-Infinity}",
            "{\"id\":1,\"method\":\"m\"} x",
            "{\"id\":1,\"method\":\"m\"}}",
            "{\"id\":1,\"method\":\"m\"}{\"id\":2,\"method\":\"m\"}",
            "{\"id\":1,\"method\":\"m\"} {\"id\":2}",
            "{\"id\":1,\"method\":\"m\"} 5",
            "{\"id\":1,\"method\":\"m\"}5",
            "{\"id\":1,\"method\":\"m\"} \"s\"",
            "{\"id\":1,\"method\":\"m\"} \"unterminated}",
            "{\"id\":1,\"method\":\"m\"} \"}",
            "[1] \"]",
            "{\"id\":1,\"method\":\"m\"} 12}",
            "{\"id\":1,}",
            "{\"id\":1, \t }",
            "{\"id\":1,\"params\":{\"a\":1,}}",
            "[1,]",
            "{\"id\":1 \"method\":\"m\"}",
            "{'id':1}",
            "{id:1}",
            "{\"id\":01}",
            "{\"id\":1.}",
            "{\"id\":tru}",
            "{\"id\":\"a\u0001b\"}",
            "{\"id\":\"\\x\"}",
            "{\"id\":1} // comment",
            "/* comment */ {\"id\":1}",
            "42 43",
            "\"a\" \"b\"",
            "\"abc\"5",
            "\"unterminated",
            "tru",
            "-",
            "[",
            "', 'i', 'd', '",
            "', (byte) 0xC3, '(', '",
            "', (byte) 0x80, '",
            "', (byte) 0xFE, '",
            "', (byte) 0xE6, (byte) 0xA4, '",
            "', 'i', (byte) 0xFF, '",
            "', (byte) 0xF0, (byte) 0x9F, (byte) 0x98, '",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"b\"}}",
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}} 12",
            "345}",
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}} \"text}",
            "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}",
            "6",
            "   ",
            "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}  \t ",
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{}}",
            "\"bare\"",
            "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"m\"}",
            "[{\"id\":11,\"method\":\"a\"},{\"id\":12,\"result\":1}]",
            "garbage",
            "{\"id\":13,\"method\":\"m\"}{\"id\":14}",
            "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"ping\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"ping\"}",
            "17",
            "{\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"ping\"}",
            "expected",
            "b",
            "ping",
            "{\"id\":1,\"result\":1}",
            "{\"id\":2,\"result\":2}",
            "{\"id\":1,\"result\":1} 12",
            "12",
            "3",
            "{\"id\":2,\"result\":1}",
            "{\"id\":1,\"method\":\"m\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":\"\u00e9\",\"method\":\"tools/call\",\"params\":{\"name\":" + "\"\ud83d\udd0d\",\"arguments\":{\"q\":[1,2.5e-3,true,null]}}}",
            "{}[]\":,\\ 0-9eE. + tfn\u00e9\n",
            "round %d, size %d: %s",
            "round %d, shared sniffer: %s",
            "input: ",
            "\n",
            "{\"jsonrpc\":\"2.0\",\"id\":",
            ",\"method\":\"m\"}",
            "}\"\n",
            "{\"x",
    };

    private static final String[] REALISTIC = {
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                + "\"capabilities\":{\"roots\":{\"listChanged\":true},\"sampling\":{},\"elicitation\":{}},"
                + "\"clientInfo\":{\"name\":\"example-client\",\"title\":\"Example Client\",\"version\":\"1.0.0\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"logging\":{},"
                + "\"prompts\":{\"listChanged\":true},\"resources\":{\"subscribe\":true,\"listChanged\":true},"
                + "\"tools\":{\"listChanged\":true}},\"serverInfo\":{\"name\":\"everything\",\"version\":\"2.0.0\"},"
                + "\"instructions\":\"Use \\\"echo\\\" to test.\\nOther tools: add, longRunningOperation.\"}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"echo\",\"description\":\"Echoes back the input\","
                + "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\","
                + "\"description\":\"Message to echo\"}},\"required\":[\"message\"],\"additionalProperties\":false,"
                + "\"$schema\":\"http://json-schema.org/draft-07/schema#\"}},{\"name\":\"add\",\"description\":"
                + "\"Adds two numbers\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},"
                + "\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"]},\"annotations\":{\"readOnlyHint\":true}}],"
                + "\"nextCursor\":\"eyJwYWdlIjoyfQ==\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":"
                + "{\"message\":\"h\u00e9llo \ud83d\ude00 \u6570\u636e\"},\"_meta\":{\"progressToken\":2}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Echo: h\u00e9llo\\n\\\"x\\\"\"}],"
                + "\"structuredContent\":{\"a\":1.5e-3,\"b\":-0,\"c\":[true,false,null]},\"isError\":false}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":2,\"progress\":50,"
                + "\"total\":100,\"message\":\"half way\"}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"logger\":\"srv\","
                + "\"data\":{\"msg\":\"tick\",\"n\":12345678901234567890}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":\"req-7f3a\",\"method\":\"resources/read\",\"params\":{\"uri\":\"file:///tmp/a b.txt\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":\"req-7f3a\",\"result\":{\"contents\":[{\"uri\":\"file:///tmp/a b.txt\","
                + "\"mimeType\":\"text/plain\",\"blob\":\"AAECAwQFBgcICQ==\"}]}}",
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,\"message\":\"Unknown tool: nope\",\"data\":null}}",
        "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":2,\"reason\":\"timeout\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}",
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[{\"role\":\"user\","
                + "\"content\":{\"type\":\"text\",\"text\":\"What is \\u00e9?\"}}],\"maxTokens\":100}}",
        "[{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}},"
                + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}]",
        "  {\"jsonrpc\" : \"2.0\" ,\n \"id\" : 8 ,\r\n\t\"method\" : \"tools/call\" , \"params\" : { \"name\" : \"x\" } }  \r",
        "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"search_\u00e9\u6570\ud83d\udd0d\"}}",
    };

    @Test
    void fastPathAgreesWithTheParserOnEveryInput() {
        int cases = Integer.getInteger("sniff.differential.cases", DEFAULT_CASES);
        Random random = new Random(Long.getLong("sniff.differential.seed", SEED));
        Generator generator = new Generator(random);
        List<byte[]> seeds = new ArrayList<>();
        for (String literal : TEST_LITERALS) {
            seeds.add(literal.getBytes(StandardCharsets.UTF_8));
        }
        for (String message : REALISTIC) {
            seeds.add(message.getBytes(StandardCharsets.UTF_8));
        }
        seeds.addAll(EXTRA_BYTES);

        Checker checker = new Checker();
        for (byte[] input : seeds) {
            checker.check(input);
        }
        int seeded = seeds.size();
        while (checker.cases < cases) {
            // Half well-formed messages, half broken ones (a tenth from the fixed inputs above).
            byte[] input;
            int pick = random.nextInt(10);
            if (pick < 5) {
                input = generator.message();
            } else if (pick < 6) {
                input = seeds.get(random.nextInt(seeded));
                input = generator.mutate(input);
            } else {
                input = generator.mutate(generator.message());
            }
            checker.check(input);
        }
        System.out.printf("differential: %d inputs (%d well-formed, %d malformed, %d blank); the fast path "
                        + "answered %d, the parser %d; %d ms%n",
                checker.cases, checker.wellFormed, checker.malformed, checker.blank, checker.fast,
                checker.cases - checker.fast, checker.elapsedMillis());
        assertThat(checker.cases).isGreaterThanOrEqualTo(cases);
        // The fast path must actually run: on most well-formed inputs (the generator sends
        // escaped captured values, fractional ids and bare scalars to the parser on purpose).
        assertThat(checker.fast).isGreaterThan(checker.wellFormed / 2);
        assertThat(checker.malformed).isGreaterThan(cases / 5);
    }

    @Test
    void fastPathAnswersTheCommonMessagesItself() {
        FastEnvelopeScanner scanner = new FastEnvelopeScanner(new TextCache());
        for (String message : REALISTIC) {
            byte[] bytes = message.getBytes(StandardCharsets.UTF_8);
            assertThat(scanner.scan(bytes, 0, bytes.length)).as(message).isNotNull();
        }
    }

    @Test
    void capturedStringsComeFromTheCache() {
        EnvelopeSniffer sniffer = new EnvelopeSniffer();
        byte[] a = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search\"}}"
                .getBytes(StandardCharsets.UTF_8);
        byte[] b = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"search\"}}"
                .getBytes(StandardCharsets.UTF_8);
        Envelope first = sniffer.sniff(a, 0, a.length);
        Envelope second = sniffer.sniff(b, 0, b.length);
        assertThat(second.method()).isSameAs(first.method());
        assertThat(second.paramsName()).isSameAs(first.paramsName());
        assertThat(second.jsonrpc()).isSameAs(first.jsonrpc());
    }

    /** Odd bytes of EnvelopeSnifferTest and more: invalid and borderline UTF-8, BOM, deep nesting. */
    private static final List<byte[]> EXTRA_BYTES = List.of(
            new byte[] {(byte) 0xFF},
            bytes("{\"id\":\"", (byte) 0xC3, '(', "\"}"),
            bytes("{\"id\":\"", (byte) 0x80, "\"}"),
            bytes("{\"id\":\"", (byte) 0xFE, "\"}"),
            bytes("{\"id\":\"", (byte) 0xE6, (byte) 0xA4, "\"}"),
            bytes("{\"i", (byte) 0xFF, "\":1}"),
            bytes("{\"id\":", (byte) 0xC3, (byte) 0xA9, "}"),
            bytes("{\"id\":\"", (byte) 0xF0, (byte) 0x9F, (byte) 0x98, "\"}"),
            bytes("{\"id\":\"", (byte) 0xC0, (byte) 0x80, "\"}"),                    // overlong NUL
            bytes("{\"id\":\"", (byte) 0xC1, (byte) 0xBF, "\"}"),                    // overlong
            bytes("{\"id\":\"", (byte) 0xE0, (byte) 0x80, (byte) 0x80, "\"}"),       // overlong
            bytes("{\"id\":\"", (byte) 0xED, (byte) 0xA0, (byte) 0x80, "\"}"),       // encoded surrogate
            bytes("{\"a\":\"", (byte) 0xED, (byte) 0xBF, (byte) 0xBF, "\"}"),
            bytes("{\"a\":\"", (byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80, "\"}"),  // above U+10FFFF
            bytes("{\"a\":\"", (byte) 0xF5, (byte) 0x80, (byte) 0x80, (byte) 0x80, "\"}"),
            bytes("{\"a\":\"", (byte) 0xF8, (byte) 0x88, (byte) 0x80, (byte) 0x80, (byte) 0x80, "\"}"),
            bytes("{\"a\":\"", (byte) 0xEF, (byte) 0xBF, (byte) 0xBF, "\"}"),       // U+FFFF
            bytes("{\"a\":\"", (byte) 0xF4, (byte) 0x8F, (byte) 0xBF, (byte) 0xBF, "\"}"),  // U+10FFFF
            bytes((byte) 0xEF, (byte) 0xBB, (byte) 0xBF, "{\"id\":1,\"method\":\"m\"}"),     // BOM
            bytes("{\"id\":1,\"method\":\"m\"}", (byte) 0),
            bytes("{\"a\":\"", (byte) 0x7F, "\",\"id\":1}"),                          // DEL is not a control char in JSON
            bytes("{\"a\":\"\\ud800\",\"id\":1}"),
            bytes("{\"a\":\"\\udc00\\ud800\",\"id\":\"\\ud800\"}"),
            bytes("{\"id\":1,\"method\":\"m\",\"params\":{\"name\":\"\\udfff\"}}"),
            bytes("{\"id\":1,\"params\":{\"name\":\"x\"},\"params\":{\"name\":7},\"method\":\"m\"}"),
            bytes("{\"id\":1,\"params\":{\"name\":\"x\"},\"params\":[1],\"params\":{},\"method\":\"m\"}"),
            bytes("{\"id\":5,\"id\":[1],\"jsonrpc\":\"2.0\",\"jsonrpc\":{},\"method\":\"a\",\"method\":[]}"),
            bytes("{\"id\":5,\"id\":true,\"jsonrpc\":\"2.0\",\"jsonrpc\":1,\"method\":\"a\",\"method\":null}"),
            bytes("{\"\\u0069d\":5,\"method\":\"m\"}"),
            bytes("{\"method\":\"m\",\"params\":{\"\\u006eame\":\"n\"}}"),
            bytes("{\"id\":-0,\"method\":\"m\"}"),
            bytes("{\"id\":-0.0,\"method\":\"m\"}"),
            bytes("{\"id\":999999999999999999,\"method\":\"m\"}"),
            bytes("{\"id\":-999999999999999999,\"method\":\"m\"}"),
            bytes("{\"id\":1000000000000000000,\"method\":\"m\"}"),
            bytes("{\"id\":-9223372036854775809,\"method\":\"m\"}"),
            bytes("{\"id\":1E400,\"method\":\"m\"}"),
            bytes("{\"id\":0.1e-400,\"method\":\"m\"}"),
            bytes("[" + "[".repeat(5000) + "]".repeat(5000) + "]"),
            bytes("{\"id\":1,\"result\":" + "{\"a\":[".repeat(3000) + "]}".repeat(3000) + "}"),
            bytes("{\"id\":1,\"result\":" + "{\"a\":[".repeat(3000) + "]}".repeat(2999) + "}"),
            bytes("{\"id\":1,\"result\":\"" + "x".repeat(100_000) + "\"}"),
            bytes(" \t\r\n "),
            bytes(""),
            bytes("\u000b{}"),
            bytes("{}\u000c"),
            bytes("{\"id\":1}\u00a0"));

    private static byte[] bytes(Object... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object part : parts) {
            if (part instanceof String) {
                out.writeBytes(((String) part).getBytes(StandardCharsets.UTF_8));
            } else if (part instanceof Byte) {
                out.write((Byte) part);
            } else {
                out.write((Character) part);
            }
        }
        return out.toByteArray();
    }

    /** Runs one input through the fast sniffer, the reference, and the scanner alone. */
    private static final class Checker {
        final EnvelopeSniffer sniffer = new EnvelopeSniffer();
        final EnvelopeSniffer reference = new EnvelopeSniffer(false);
        final FastEnvelopeScanner scanner = new FastEnvelopeScanner(new TextCache());
        final long started = System.nanoTime();
        int cases;
        int wellFormed;
        int malformed;
        int blank;
        int fast;

        void check(byte[] input) {
            Envelope expected;
            try {
                expected = reference.sniff(Unpooled.wrappedBuffer(input));
            } catch (RuntimeException e) {
                throw new AssertionError("case " + cases + ": the parser threw on " + describe(input), e);
            }
            Envelope alone = scanner.scan(input, 0, input.length);
            Envelope actual = sniffSomeWay(sniffer, input, cases);
            if (historyDependent(input)) {
                // See historyDependent: compare fresh sniffers instead.
                expected = new EnvelopeSniffer(false).sniff(Unpooled.wrappedBuffer(input));
                actual = sniffSomeWay(new EnvelopeSniffer(), input, cases);
            }
            if (!actual.equals(expected) || (alone != null && !alone.equals(expected))) {
                throw new AssertionError("case " + cases + ": " + describe(input) + "\n  parser:  " + expected
                        + "\n  sniff:   " + actual + "\n  scanner: " + alone);
            }
            cases++;
            if (alone != null) {
                fast++;
            }
            if (expected.kind() == MessageKind.MALFORMED) {
                malformed++;
            } else if (expected.kind() == MessageKind.BLANK) {
                blank++;
            } else {
                wellFormed++;
            }
        }

        /**
         * jackson's parser takes a byte order mark (or a 0xEF byte as the start of one) only at
         * the very start of its input, and the sniffer keeps its parser from one clean message to
         * the next: so a message that starts with a BOM is read one way by a parser that is new
         * (or was dropped after a malformed message) and another way by one that has read earlier
         * messages; the parser alone already answers so. With the fast path the parser reads
         * fewer messages, so for these inputs two shared sniffers may differ. The fast path itself
         * leaves every such input to the parser, and fresh sniffers must agree on it.
         */
        private static boolean historyDependent(byte[] input) {
            int i = 0;
            while (i < input.length && (input[i] == ' ' || input[i] == '\t' || input[i] == '\r' || input[i] == '\n')) {
                i++;
            }
            return i < input.length && input[i] == (byte) 0xEF;
        }

        /** In turn: a heap buffer, a byte range with junk around it, a direct buffer. */
        private Envelope sniffSomeWay(EnvelopeSniffer sniffer, byte[] input, int n) {
            switch (n % 3) {
                case 0:
                    return sniffer.sniff(Unpooled.wrappedBuffer(input));
                case 1: {
                    byte[] padded = new byte[input.length + 6];
                    padded[0] = '"';
                    padded[1] = '{';
                    padded[2] = '\\';
                    System.arraycopy(input, 0, padded, 3, input.length);
                    padded[input.length + 3] = '"';
                    padded[input.length + 4] = '1';
                    padded[input.length + 5] = '}';
                    return sniffer.sniff(padded, 3, 3 + input.length);
                }
                default: {
                    ByteBuf direct = Fragments.UNTRACKED.directBuffer(input.length + 4);
                    try {
                        direct.writeBytes(new byte[] {'[', '[', '"', ' '});
                        direct.writeBytes(input);
                        direct.readerIndex(4);
                        return sniffer.sniff(direct);
                    } finally {
                        direct.release();
                    }
                }
            }
        }

        long elapsedMillis() {
            return (System.nanoTime() - started) / 1_000_000;
        }

        private static String describe(byte[] input) {
            StringBuilder s = new StringBuilder();
            for (byte b : input) {
                int c = b & 0xFF;
                if (c >= 0x20 && c < 0x7F) {
                    s.append((char) c);
                } else {
                    s.append(String.format("\\x%02X", c));
                }
                if (s.length() > 600) {
                    return s.append("... (").append(input.length).append(" bytes)").toString();
                }
            }
            return s.toString();
        }
    }

    /**
     * Seeded JSON-RPC messages: mostly well-formed, with the odd corners the envelope cares about,
     * and a mutator that breaks them in the ways JSON breaks.
     */
    private static final class Generator {

        private static final String[] METHODS = {
            "tools/call", "tools/list", "initialize", "ping", "notifications/progress", "resources/read",
            "notifications/cancelled", "m\u00e9thode", "\u6570\u636e/\ud83d\ude00", "",
        };
        private static final String[] KEYS = {
            "name", "id", "method", "params", "result", "error", "jsonrpc", "arguments", "content", "type",
            "text", "_meta", "x", "", "n\u00e4me", "\u540d",
        };
        private static final String[] WORDS = {
            "the", "server", "r\u00e9sum\u00e9", "\u6570\u636e", "\ud83d\ude00", "{", "}", "[", "]", ":", ",",
            "\\\"", "\\\\", "\\n", "\\t", "\\/", "\\b", "\\f", "\\r", "\\u0041", "\\u00e9", "\\ud83d\\ude00",
            "\\ud800", "\\udc00", "\\uDBFF", "\\uFFFF", "\\u0000", " ", "path/to/file", "\u007f", "'",
        };
        private static final String[] SNIPPETS = {
            "01", "1.", "-", "1e", "1e+", ".5", "+1", "-01", "0x10", "1.5e", "NaN", "Infinity", "-Infinity",
            "tru", "nul", "fals", "truex", "\\x", "\\u12", "\\u12G4", "\\", "\\ud800", "\\udc00", "\"", "'",
            ",", ",]", ",}", "{", "[", "]", "}", ":", "::", "[]", "{}", "\"\":", "/*c*/", "//", " ", "\t",
            "\n", "\r", "\u000b", "\u00a0", "\ufeff", "null", "0", "-0", "1E400",
        };
        private static final byte[][] BAD_BYTES = {
            {0x00}, {0x01}, {0x1F}, {0x7F}, {(byte) 0x80}, {(byte) 0xBF}, {(byte) 0xC0, (byte) 0x80},
            {(byte) 0xC1, (byte) 0xBF}, {(byte) 0xC3}, {(byte) 0xE0, (byte) 0x80, (byte) 0x80},
            {(byte) 0xE0, (byte) 0x9F, (byte) 0xBF}, {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
            {(byte) 0xED, (byte) 0xBF, (byte) 0xBF}, {(byte) 0xE6, (byte) 0xA4},
            {(byte) 0xF0, (byte) 0x80, (byte) 0x80, (byte) 0x80}, {(byte) 0xF0, (byte) 0x9F, (byte) 0x98},
            {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80}, {(byte) 0xF5, (byte) 0x80, (byte) 0x80, (byte) 0x80},
            {(byte) 0xF8}, {(byte) 0xFE}, {(byte) 0xFF}, {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF},
            {(byte) 0xC3, (byte) 0xA9}, {(byte) 0xF0, (byte) 0x9F, (byte) 0x98, (byte) 0x80},
        };
        private static final String SPECIALS = "{}[]\":,\\ 0123456789-+.eEtrufalsn\u00e9\n\r\t";

        private final Random random;
        private final StringBuilder out = new StringBuilder();

        Generator(Random random) {
            this.random = random;
        }

        byte[] message() {
            out.setLength(0);
            space();
            int root = random.nextInt(100);
            if (root < 85) {
                envelope();
            } else if (root < 95) {
                out.append('[');
                int n = random.nextInt(5);
                for (int i = 0; i < n; i++) {
                    if (i > 0) {
                        out.append(',');
                    }
                    space();
                    if (random.nextInt(5) == 0) {
                        value(2);
                    } else {
                        envelope();
                    }
                    space();
                }
                out.append(']');
            } else {
                value(2);
            }
            space();
            return out.toString().getBytes(StandardCharsets.UTF_8);
        }

        private void envelope() {
            List<Runnable> members = new ArrayList<>();
            if (random.nextInt(10) != 0) {
                members.add(() -> member("jsonrpc", () -> {
                    int k = random.nextInt(20);
                    if (k == 0) {
                        value(1);
                    } else if (k == 1) {
                        out.append("\"2\\u002e0\"");
                    } else {
                        out.append("\"2.0\"");
                    }
                }));
            }
            boolean request = random.nextBoolean();
            if (random.nextInt(4) != 0) {
                members.add(() -> member("id", this::id));
            }
            if (request) {
                members.add(() -> member("method", () -> {
                    if (random.nextInt(15) == 0) {
                        value(1);
                    } else {
                        string(METHODS[random.nextInt(METHODS.length)], random.nextInt(30) == 0);
                    }
                }));
                if (random.nextInt(4) != 0) {
                    members.add(() -> member("params", this::params));
                }
            } else if (random.nextBoolean()) {
                members.add(() -> member("result", () -> value(4)));
            } else {
                members.add(() -> member("error", () -> value(3)));
            }
            int extra = random.nextInt(3);
            for (int i = 0; i < extra; i++) {
                members.add(() -> member(KEYS[random.nextInt(KEYS.length)], () -> value(3)));
            }
            if (random.nextInt(8) == 0) {
                members.add(members.get(random.nextInt(members.size()))); // a duplicate member
            }
            Collections.shuffle(members, random);
            out.append('{');
            for (int i = 0; i < members.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                space();
                members.get(i).run();
                space();
            }
            out.append('}');
        }

        private void params() {
            int k = random.nextInt(10);
            if (k == 0) {
                value(3);
                return;
            }
            List<Runnable> members = new ArrayList<>();
            if (random.nextInt(4) != 0) {
                members.add(() -> member("name", () -> {
                    if (random.nextInt(10) == 0) {
                        value(2);
                    } else {
                        string(word() + "_" + word(), random.nextInt(30) == 0);
                    }
                }));
            }
            int extra = random.nextInt(4);
            for (int i = 0; i < extra; i++) {
                members.add(() -> member(KEYS[random.nextInt(KEYS.length)], () -> value(3)));
            }
            Collections.shuffle(members, random);
            out.append('{');
            for (int i = 0; i < members.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                space();
                members.get(i).run();
                space();
            }
            out.append('}');
        }

        private void id() {
            switch (random.nextInt(24)) { // mostly small integers, as in real traffic
                case 0: out.append("null"); break;
                case 1: out.append(random.nextBoolean() ? "true" : "false"); break;
                case 2: string(word() + random.nextInt(1000), random.nextInt(20) == 0); break;
                case 3: out.append(random.nextLong()); break;
                case 4: out.append(Long.MAX_VALUE - random.nextInt(3)); break;
                case 5: out.append(Long.MIN_VALUE + random.nextInt(3)); break;
                case 6: out.append("9223372036854775808"); break;
                case 7: out.append(random.nextInt(2) == 0 ? "-" : "").append(digits(17 + random.nextInt(4))); break;
                case 8: out.append(random.nextInt(100)).append('.').append(random.nextInt(100)); break;
                case 9: out.append(random.nextInt(10)).append(random.nextBoolean() ? "e" : "E")
                        .append(random.nextBoolean() ? "-" : "+").append(random.nextInt(30)); break;
                case 10: value(2); break;
                case 11: out.append("-0"); break;
                default: out.append(random.nextInt(random.nextBoolean() ? 100 : 1_000_000)); break;
            }
        }

        private String digits(int n) {
            StringBuilder s = new StringBuilder();
            s.append((char) ('1' + random.nextInt(9)));
            for (int i = 1; i < n; i++) {
                s.append((char) ('0' + random.nextInt(10)));
            }
            return s.toString();
        }

        private void member(String name, Runnable value) {
            string(name, random.nextInt(300) == 0);
            space();
            out.append(':');
            space();
            value.run();
        }

        /** A string literal of {@code text}; {@code escapeAll} writes it in \\u escapes. */
        private void string(String text, boolean escapeAll) {
            out.append('"');
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                if (escapeAll) {
                    out.append(String.format("\\u%04x", (int) c));
                } else if (c == '"' || c == '\\') {
                    out.append('\\').append(c);
                } else {
                    out.append(c);
                }
            }
            out.append('"');
        }

        private String word() {
            return KEYS[random.nextInt(KEYS.length)];
        }

        private void value(int depth) {
            int k = random.nextInt(depth > 0 ? 9 : 6);
            switch (k) {
                case 0: {
                    out.append('"');
                    int n = random.nextInt(6);
                    for (int i = 0; i < n; i++) {
                        out.append(WORDS[random.nextInt(WORDS.length)]);
                    }
                    if (random.nextInt(20) == 0) {
                        out.append("x".repeat(random.nextInt(200)));
                    }
                    out.append('"');
                    break;
                }
                case 1: number(); break;
                case 2: out.append(random.nextBoolean() ? "true" : "false"); break;
                case 3: out.append("null"); break;
                case 4: string(word(), false); break;
                case 5: number(); break;
                case 6:
                case 7: {
                    out.append('{');
                    int n = random.nextInt(4);
                    for (int i = 0; i < n; i++) {
                        if (i > 0) {
                            out.append(',');
                        }
                        space();
                        member(KEYS[random.nextInt(KEYS.length)], () -> value(depth - 1));
                        space();
                    }
                    out.append('}');
                    break;
                }
                default: {
                    out.append('[');
                    int n = random.nextInt(4);
                    for (int i = 0; i < n; i++) {
                        if (i > 0) {
                            out.append(',');
                        }
                        space();
                        value(depth - 1);
                        space();
                    }
                    out.append(']');
                    break;
                }
            }
        }

        private void number() {
            if (random.nextInt(4) == 0) {
                out.append('-');
            }
            out.append(random.nextInt(5) == 0 ? "0" : String.valueOf(1 + random.nextInt(100_000)));
            if (random.nextInt(4) == 0) {
                out.append('.').append(random.nextInt(1000));
            }
            if (random.nextInt(6) == 0) {
                out.append("eE".charAt(random.nextInt(2))).append(random.nextBoolean() ? "" : random.nextBoolean() ? "+" : "-")
                        .append(random.nextInt(400));
            }
        }

        private void space() {
            if (random.nextInt(6) == 0) {
                int n = 1 + random.nextInt(3);
                for (int i = 0; i < n; i++) {
                    out.append(" \t\r\n".charAt(random.nextInt(4)));
                }
            }
        }

        /** The input broken in one to three ways. */
        byte[] mutate(byte[] input) {
            byte[] bytes = input;
            int edits = 1 + random.nextInt(3);
            for (int e = 0; e < edits; e++) {
                int at = bytes.length == 0 ? 0 : random.nextInt(bytes.length + 1);
                switch (random.nextInt(9)) {
                    case 0: // flip a byte
                        if (bytes.length > 0) {
                            bytes = bytes.clone();
                            int i = Math.min(at, bytes.length - 1);
                            bytes[i] = random.nextBoolean() ? (byte) SPECIALS.charAt(random.nextInt(SPECIALS.length()))
                                    : (byte) random.nextInt(256);
                        }
                        break;
                    case 1: // delete a byte or a few
                        if (bytes.length > 0) {
                            int i = Math.min(at, bytes.length - 1);
                            int n = Math.min(bytes.length - i, 1 + random.nextInt(random.nextBoolean() ? 1 : 8));
                            bytes = splice(bytes, i, n, new byte[0]);
                        }
                        break;
                    case 2: // insert a snippet
                        bytes = splice(bytes, at, 0, SNIPPETS[random.nextInt(SNIPPETS.length)].getBytes(StandardCharsets.UTF_8));
                        break;
                    case 3: // insert bytes that are not (strict) UTF-8, or not allowed raw
                        bytes = splice(bytes, at, 0, BAD_BYTES[random.nextInt(BAD_BYTES.length)]);
                        break;
                    case 4: // insert inside a string, where most bytes go unchecked by a careless scanner
                        bytes = insertInString(bytes);
                        break;
                    case 5: // cut
                        bytes = Arrays.copyOf(bytes, at);
                        break;
                    case 6: // two roots, or the same one twice
                        bytes = splice(bytes, bytes.length, 0, random.nextBoolean() ? bytes : message());
                        break;
                    case 7: // a trailing comma before a close
                        bytes = insertBeforeClose(bytes, ",");
                        break;
                    default: // an unclosed container, or one closed too often
                        bytes = random.nextBoolean() ? splice(bytes, at, 0, new byte[] {(byte) "{[".charAt(random.nextInt(2))})
                                : splice(bytes, at, 0, new byte[] {(byte) "}]".charAt(random.nextInt(2))});
                        break;
                }
            }
            return bytes;
        }

        private byte[] insertInString(byte[] bytes) {
            List<Integer> quotes = new ArrayList<>();
            for (int i = 0; i < bytes.length; i++) {
                if (bytes[i] == '"') {
                    quotes.add(i);
                }
            }
            if (quotes.isEmpty()) {
                return bytes;
            }
            int at = quotes.get(random.nextInt(quotes.size())) + 1;
            byte[] insert = random.nextBoolean()
                    ? BAD_BYTES[random.nextInt(BAD_BYTES.length)]
                    : SNIPPETS[random.nextInt(SNIPPETS.length)].getBytes(StandardCharsets.UTF_8);
            return splice(bytes, at, 0, insert);
        }

        private byte[] insertBeforeClose(byte[] bytes, String text) {
            List<Integer> closes = new ArrayList<>();
            for (int i = 0; i < bytes.length; i++) {
                if (bytes[i] == '}' || bytes[i] == ']') {
                    closes.add(i);
                }
            }
            if (closes.isEmpty()) {
                return bytes;
            }
            return splice(bytes, closes.get(random.nextInt(closes.size())), 0, text.getBytes(StandardCharsets.UTF_8));
        }

        private static byte[] splice(byte[] bytes, int at, int remove, byte[] insert) {
            byte[] result = new byte[bytes.length - remove + insert.length];
            System.arraycopy(bytes, 0, result, 0, at);
            System.arraycopy(insert, 0, result, at, insert.length);
            System.arraycopy(bytes, at + remove, result, at + insert.length, bytes.length - at - remove);
            return result;
        }
    }
}
