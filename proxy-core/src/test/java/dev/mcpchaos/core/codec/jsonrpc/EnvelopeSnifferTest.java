package dev.mcpchaos.core.codec.jsonrpc;

import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.testing.Fragments;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link EnvelopeSniffer}: every message is sniffed whole and cut at every fragment size (fed
 * through heap and direct buffers and byte arrays with offsets, in turn) and must give the same
 * envelope; messages in a row go through one sniffer, which reuses its parser.
 */
class EnvelopeSnifferTest {

    /**
     * The sniffer only reads the buffers it is fed (the caller keeps ownership), so leak tracking
     * them would test this class, not the sniffer, and at the paranoid level it would cost a
     * stack trace per access, thousands per test. Buffers from this allocator are not tracked.
     */
    private static final ByteBufAllocator ALLOC = Fragments.UNTRACKED;
    private static final Envelope MALFORMED = Envelope.malformed("(any reason)");

    // ---------------------------------------------------------------- classification

    @Test
    void request() {
        Envelope envelope = sniff("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                + "\"params\":{\"name\":\"search\",\"arguments\":{\"q\":\"x\"}}}");
        assertThat(envelope).isEqualTo(Envelope.ofObject("2.0", true, 1L, "tools/call", "search", false, false));
        assertThat(envelope.kind()).isEqualTo(MessageKind.REQUEST);
        assertThat(envelope.isRequest()).isTrue();
        assertThat(envelope.toolName()).isEqualTo("search");
        assertThat(envelope.jsonrpc()).isEqualTo("2.0");
        assertThat(envelope.malformedReason()).isNull();
    }

    /**
     * A notification like the one before it gets that one's envelope again (no envelope made per
     * message of a stream of log or progress notifications); one that differs in any text, and
     * anything with an id, gets its own, equal to what a fresh sniffer makes.
     */
    @Test
    void aNotificationLikeTheLastSharesItsEnvelope() {
        EnvelopeSniffer sniffer = new EnvelopeSniffer();
        byte[] log = bytes("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"a\"}}");
        byte[] otherLog = bytes("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"bb\"}}");
        byte[] progress = bytes("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}");
        byte[] named = bytes("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"name\":\"x\"}}");
        byte[] request = bytes("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"notifications/message\"}");
        Envelope first = sniffer.sniff(log, 0, log.length);
        assertThat(sniffer.sniff(otherLog, 0, otherLog.length)).isSameAs(first);
        Envelope other = sniffer.sniff(progress, 0, progress.length);
        assertThat(other).isNotSameAs(first).isEqualTo(new EnvelopeSniffer().sniff(progress, 0, progress.length));
        Envelope withName = sniffer.sniff(named, 0, named.length);
        assertThat(withName.paramsName()).isEqualTo("x");
        assertThat(withName).isEqualTo(Envelope.ofObject("2.0", false, null, "notifications/message", "x", false, false));
        Envelope first2 = sniffer.sniff(request, 0, request.length);
        assertThat(sniffer.sniff(request, 0, request.length)).isNotSameAs(first2).isEqualTo(first2);
        assertThat(sniffer.sniff(log, 0, log.length)).isEqualTo(first)
                .isEqualTo(Envelope.ofObject("2.0", false, null, "notifications/message", null, false, false));
    }

    @Test
    void notification() {
        Envelope envelope = sniff("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                + "\"params\":{\"progressToken\":\"t\",\"progress\":0.5}}");
        assertThat(envelope.kind()).isEqualTo(MessageKind.NOTIFICATION);
        assertThat(envelope.hasId()).isFalse();
        assertThat(envelope.method()).isEqualTo("notifications/progress");
        assertThat(envelope.paramsName()).isNull();
    }

    @Test
    void response() {
        Envelope envelope = sniff("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"result\":{\"content\":[{\"type\":\"text\","
                + "\"text\":\"hi\"}],\"name\":\"not params\"}}");
        assertThat(envelope).isEqualTo(Envelope.ofObject("2.0", true, "abc", null, null, true, false));
        assertThat(envelope.kind()).isEqualTo(MessageKind.RESPONSE);
        assertThat(envelope.isResponse()).isTrue();
    }

    @Test
    void resultOfAnyTypeCounts() {
        for (String result : new String[] {"null", "0", "\"s\"", "true", "[]", "[1,{\"a\":2}]", "{}"}) {
            assertThat(sniff("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":" + result + "}").kind())
                    .as("result %s", result).isEqualTo(MessageKind.RESPONSE);
        }
    }

    @Test
    void errors() {
        Envelope withId = sniff("{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32601,\"message\":\"no\"}}");
        assertThat(withId).isEqualTo(Envelope.ofObject("2.0", true, 4L, null, null, false, true));
        assertThat(withId.kind()).isEqualTo(MessageKind.ERROR);
        assertThat(withId.isResponse()).isTrue();

        Envelope nullId = sniff("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"parse\"}}");
        assertThat(nullId.kind()).isEqualTo(MessageKind.ERROR);
        assertThat(nullId.hasId()).isTrue();
        assertThat(nullId.id()).isNull();

        assertThat(sniff("{\"error\":null}").kind()).isEqualTo(MessageKind.ERROR);
    }

    @Test
    void otherObjects() {
        assertThat(sniff("{}")).isEqualTo(Envelope.ofObject(null, false, null, null, null, false, false));
        assertThat(sniff("{}").kind()).isEqualTo(MessageKind.OTHER);
        assertThat(sniff("{\"jsonrpc\":\"2.0\"}").kind()).isEqualTo(MessageKind.OTHER);
        // A result without an id answers nothing.
        assertThat(sniff("{\"jsonrpc\":\"2.0\",\"result\":{}}").kind()).isEqualTo(MessageKind.OTHER);
        assertThat(sniff("{\"jsonrpc\":\"2.0\",\"id\":9}").kind()).isEqualTo(MessageKind.OTHER);
    }

    @Test
    void nonStringMembersAreNotTakenAsStrings() {
        Envelope envelope = sniff("{\"jsonrpc\":2.0,\"id\":1,\"method\":7,\"params\":{\"name\":5}}");
        assertThat(envelope.jsonrpc()).isNull();
        assertThat(envelope.method()).isNull();
        assertThat(envelope.paramsName()).isNull();
        assertThat(sniff("{\"id\":1,\"method\":{\"x\":\"tools/call\"}}").method()).isNull();
        assertThat(sniff("{\"id\":1,\"method\":\"m\",\"params\":{\"name\":[\"a\"]}}").paramsName()).isNull();
        assertThat(sniff("{\"id\":1,\"method\":\"m\",\"params\":{\"name\":{\"name\":\"a\"}}}").paramsName()).isNull();
    }

    @Test
    void bareValuesAreWellFormedButNotMessages() {
        for (String value : new String[] {"42", "-1.5e3", "\"abc\"", "true", "false", "null", " 7 ", "\"\""}) {
            assertThat(sniff(value)).as(value).isEqualTo(Envelope.ofOther());
        }
    }

    @Test
    void blankMessages() {
        for (String blank : new String[] {"", " ", "\t", "   \t  ", "\r", " \r"}) {
            assertThat(sniff(blank)).as("'%s'", blank).isEqualTo(Envelope.blank());
            assertThat(sniff(blank).kind()).isEqualTo(MessageKind.BLANK);
        }
    }

    // ---------------------------------------------------------------- members in any order, nesting

    @Test
    void membersInAnyOrder() {
        String[] members = {
            "\"jsonrpc\":\"2.0\"",
            "\"id\":12",
            "\"method\":\"tools/call\"",
            "\"params\":{\"arguments\":{\"name\":\"deep\"},\"name\":\"search_docs\",\"_meta\":{\"name\":\"m\"}}",
        };
        Envelope expected = Envelope.ofObject("2.0", true, 12L, "tools/call", "search_docs", false, false);
        for (List<String> order : permutations(List.of(members))) {
            assertThat(sniff("{" + String.join(",", order) + "}")).as("order %s", order).isEqualTo(expected);
        }
    }

    @Test
    void paramsNameOnlyAtItsOwnDepth() {
        // params.arguments.name and deeper names never count; params.name counts wherever it sits.
        assertThat(sniff("{\"id\":1,\"method\":\"tools/call\",\"params\":{\"arguments\":{\"name\":\"deep\"}}}")
                .paramsName()).isNull();
        assertThat(sniff("{\"id\":1,\"method\":\"tools/call\",\"params\":{\"arguments\":{\"name\":\"deep\"},"
                + "\"name\":\"right\"}}").paramsName()).isEqualTo("right");
        assertThat(sniff("{\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"right\","
                + "\"arguments\":{\"name\":\"deep\",\"x\":{\"name\":\"deeper\"}}}}").paramsName()).isEqualTo("right");
        assertThat(sniff("{\"id\":1,\"method\":\"m\",\"params\":{\"list\":[{\"name\":\"in array\"},[\"name\"]]}}")
                .paramsName()).isNull();
        assertThat(sniff("{\"id\":1,\"method\":\"m\",\"params\":[{\"name\":\"positional\"}]}").paramsName()).isNull();
        // A top-level "name", or one under result or error, is not params.name.
        assertThat(sniff("{\"id\":1,\"method\":\"m\",\"name\":\"top\"}").paramsName()).isNull();
        assertThat(sniff("{\"id\":1,\"result\":{\"name\":\"r\"},\"params\":{}}").paramsName()).isNull();
        assertThat(sniff("{\"id\":1,\"method\":\"m\",\"x\":{\"params\":{\"name\":\"nested params\"}}}").paramsName())
                .isNull();
    }

    @Test
    void topLevelMembersOnlyAtTheTop() {
        // Members named id, method, result, error inside params or elsewhere change nothing.
        Envelope envelope = sniff("{\"method\":\"notifications/message\",\"params\":{\"id\":5,\"method\":\"x\","
                + "\"result\":1,\"error\":{},\"data\":{\"id\":6,\"jsonrpc\":\"1.0\"}}}");
        assertThat(envelope).isEqualTo(Envelope.ofObject(null, false, null, "notifications/message", null, false, false));
    }

    // ---------------------------------------------------------------- strings

    @Test
    void escapedQuotesAndNewlinesInsideStrings() {
        Envelope envelope = sniff("{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\\nc\",\"method\":\"to\\\"ols\\\\call\","
                + "\"params\":{\"text\":\"}{\\\"id\\\":99,\\\"name\\\":\\\"fake\\\"}\\n\",\"name\":\"re\\u0061l\\n\\t\\/\"}}");
        assertThat(envelope.id()).isEqualTo("a\"b\nc");
        assertThat(envelope.method()).isEqualTo("to\"ols\\call");
        assertThat(envelope.paramsName()).isEqualTo("real\n\t/");
        assertThat(envelope.kind()).isEqualTo(MessageKind.REQUEST);
    }

    @Test
    void structuralCharactersInsideStringsAreText() {
        Envelope envelope = sniff("{\"id\":\"[{\\\"\",\"method\":\"m]}\",\"params\":{\"a\":\"\\\\\",\"name\":\"]\"}}");
        assertThat(envelope).isEqualTo(Envelope.ofObject(null, true, "[{\"", "m]}", "]", false, false));
    }

    @Test
    void unicodeSplitAnywhere() {
        // 2-, 3- and 4-byte UTF-8 sequences; fragment sizes cut inside every one of them.
        String name = "r\u00e9sum\u00e9_\u691c\u7d22_\ud83d\udd0d_\ud83d\ude00";
        Envelope envelope = sniff("{\"jsonrpc\":\"2.0\",\"id\":\"\u4e00\u4e8c\",\"method\":\"tools/call\","
                + "\"params\":{\"arguments\":{\"q\":\"\ud83e\udd16\u00fc\"},\"name\":\"" + name + "\"}}");
        assertThat(envelope).isEqualTo(Envelope.ofObject("2.0", true, "\u4e00\u4e8c", "tools/call", name, false, false));
        // A key can be non-ASCII too, and escaped surrogate pairs decode to the same text.
        assertThat(sniff("{\"\u540d\":1,\"id\":1,\"method\":\"m\",\"params\":{\"name\":\"\\ud83d\\udd0d\"}}").paramsName())
                .isEqualTo("\ud83d\udd0d");
    }

    @Test
    void largeStringsAcrossTheScratchBuffer() {
        // Longer than the sniffer's 8 KiB copy buffer for direct buffers.
        // Sizes around the copy buffer's, rather than every size up to 64: a 35 KB input cut into
        // tiny pieces would only repeat what the small inputs above test.
        String big = "\u00e9\ud83d\ude00x".repeat(5000);
        String json = "{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{\"text\":\"" + big + "\"},\"method2\":\"\"}";
        Envelope envelope = Fragments.assertSameAtSizes(bytes(json), new int[] {7, 1000, 4096, 8191, 8192, 8193, 20_000},
                chunks -> comparable(sniffChunks(new EnvelopeSniffer(), chunks)));
        assertThat(envelope).isEqualTo(Envelope.ofObject("2.0", true, 77L, null, null, true, false));
    }

    // ---------------------------------------------------------------- ids

    @Test
    void ids() {
        assertThat(idOf("7")).isEqualTo(7L);
        assertThat(idOf("\"7\"")).isEqualTo("7");
        assertThat(idOf("0")).isEqualTo(0L);
        assertThat(idOf("-3")).isEqualTo(-3L);
        assertThat(idOf("\"\"")).isEqualTo("");
        assertThat(idOf(String.valueOf(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
        assertThat(idOf(String.valueOf(Long.MIN_VALUE))).isEqualTo(Long.MIN_VALUE);
        assertThat(idOf("9223372036854775808")).isEqualTo(new BigDecimal("9223372036854775808"));
        assertThat(idOf("123456789012345678901234567890")).isEqualTo(new BigDecimal("123456789012345678901234567890"));
        assertThat(idOf("1.5")).isEqualTo(new BigDecimal("1.5"));
        assertThat(idOf("1e3")).isEqualTo(new BigDecimal("1e3"));
        assertThat(idOf("null")).isNull();
    }

    @Test
    void idsBeyondBigDecimalArePresentWithoutAValue() {
        // Well-formed JSON whose exponent no BigDecimal holds: the id is there, its value is not.
        for (String id : new String[] {"1e9999999999", "-92233720361E400854775808", "0.5E-99999999999"}) {
            Envelope envelope = sniff("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"m\"}");
            assertThat(envelope).as(id).isEqualTo(Envelope.ofObject("2.0", true, null, "m", null, false, false));
        }
    }

    @Test
    void numericAndStringIdsStayDistinct() {
        Envelope number = sniff("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}");
        Envelope string = sniff("{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{}}");
        assertThat(number.id()).isEqualTo(7L).isNotEqualTo(string.id());
        assertThat(number).isNotEqualTo(string);
    }

    @Test
    void idPresenceIsKeptEvenWhenNullOrNotAScalar() {
        assertThat(sniff("{\"id\":null,\"method\":\"m\"}").hasId()).isTrue();
        assertThat(sniff("{\"id\":null,\"method\":\"m\"}").kind()).isEqualTo(MessageKind.REQUEST);
        assertThat(sniff("{\"method\":\"m\"}").hasId()).isFalse();
        Envelope objectId = sniff("{\"id\":{\"x\":1},\"method\":\"m\"}");
        assertThat(objectId.hasId()).isTrue();
        assertThat(objectId.id()).isNull();
        assertThat(sniff("{\"id\":[1],\"result\":1}").kind()).isEqualTo(MessageKind.RESPONSE);
        assertThat(sniff("{\"id\":true,\"method\":\"m\"}").hasId()).isTrue();
    }

    // ---------------------------------------------------------------- batches

    @Test
    void batchWithItsElementsEnvelopes() {
        Envelope batch = sniff("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\","
                + "\"arguments\":{\"name\":\"no\"}}},"
                + "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}},"
                + "{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"result\":{\"id\":5}},"
                + "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":1,\"message\":\"m\"}},"
                + "5,\"s\",[{\"id\":9,\"method\":\"deeper\"}],null,{}]");
        assertThat(batch.kind()).isEqualTo(MessageKind.BATCH);
        assertThat(batch.hasId()).isFalse();
        assertThat(batch.method()).isNull();
        assertThat(batch.batch()).containsExactly(
                Envelope.ofObject("2.0", true, 1L, "tools/call", "a", false, false),
                Envelope.ofObject("2.0", false, null, "notifications/cancelled", null, false, false),
                Envelope.ofObject("2.0", true, "r", null, null, true, false),
                Envelope.ofObject("2.0", true, 2L, null, null, false, true),
                Envelope.ofOther(),
                Envelope.ofOther(),
                Envelope.ofOther(),
                Envelope.ofOther(),
                Envelope.ofObject(null, false, null, null, null, false, false));
    }

    @Test
    void emptyBatch() {
        assertThat(sniff("[]")).isEqualTo(Envelope.ofBatch(List.of()));
        assertThat(sniff(" [ ] ")).isEqualTo(Envelope.ofBatch(List.of()));
    }

    @Test
    void malformedBatch() {
        assertThat(sniff("[{\"id\":1,\"method\":\"a\"},").kind()).isEqualTo(MessageKind.MALFORMED);
        assertThat(sniff("[{\"id\":1,\"method\":\"a\"}").kind()).isEqualTo(MessageKind.MALFORMED);
        assertThat(sniff("[{\"id\":1,\"method\":\"a\"}]]").kind()).isEqualTo(MessageKind.MALFORMED);
        assertThat(sniff("[{\"id\":1,\"method\":\"a\"}][]").kind()).isEqualTo(MessageKind.MALFORMED);
    }

    // ---------------------------------------------------------------- malformed input

    @Test
    void malformedJson() {
        String[] malformed = {
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"",      // truncated object
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":",            // truncated before a value
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x",         // truncated inside a string
            "{\"id\":1,\"params\":[1,2}",                           // unclosed bracket
            "{\"id\":1,\"params\":{\"a\":1}",                      // unclosed brace
            "{\"id\":1]",                                            // mismatched close
            "}",
            "]",
            "hello",                                                 // garbage
            "Content-Length: 12",
            "{\"id\":NaN,\"method\":\"m\"}",                       // NaN literal
            "{\"id\":1,\"result\":Infinity}",
            "{\"id\":1,\"result\":-Infinity}",
            "{\"id\":1,\"method\":\"m\"} x",                       // trailing data
            "{\"id\":1,\"method\":\"m\"}}",
            "{\"id\":1,\"method\":\"m\"}{\"id\":2,\"method\":\"m\"}", // two objects on one line
            "{\"id\":1,\"method\":\"m\"} {\"id\":2}",
            "{\"id\":1,\"method\":\"m\"} 5",                       // a trailing number
            "{\"id\":1,\"method\":\"m\"}5",
            "{\"id\":1,\"method\":\"m\"} \"s\"",
            "{\"id\":1,\"method\":\"m\"} \"unterminated}",      // a trailing partial token ending in }
            "{\"id\":1,\"method\":\"m\"} \"}",
            "[1] \"]",
            "{\"id\":1,\"method\":\"m\"} 12}",
            "{\"id\":1,}",                                           // trailing comma, at any cut
            "{\"id\":1, \t }",
            "{\"id\":1,\"params\":{\"a\":1,}}",
            "[1,]",
            "{\"id\":}",                                            // a colon and no value, at any cut (F8)
            "{\"ieod\":} \t",
            "{\"id\": \t }",
            "{\"id\":1,\"params\":{\"a\":}}",
            "{\"id\":1 \"method\":\"m\"}",                          // missing comma
            "{'id':1}",                                              // single quotes
            "{id:1}",                                                // unquoted name
            "{\"id\":01}",                                           // leading zero
            "{\"id\":1.}",
            "{\"id\":tru}",
            "{\"id\":\"a\u0001b\"}",                                 // raw control character in a string
            "{\"id\":\"\\x\"}",                                     // bad escape
            "{\"id\":1} // comment",
            "/* comment */ {\"id\":1}",
            "42 43",                                                 // two bare values
            "\"a\" \"b\"",
            "\"abc\"5",
            "\"unterminated",
            "tru",
            "-",
            "[",
            "{",
        };
        for (String input : malformed) {
            Envelope envelope = describedAs(input, () -> sniff(input));
            assertThat(envelope.kind()).as(input).isEqualTo(MessageKind.MALFORMED);
            assertThat(envelope.malformedReason()).as(input).isNotBlank();
            assertThat(envelope.hasId()).isFalse();
            assertThat(envelope.method()).isNull();
        }
    }

    @Test
    void invalidUtf8IsMalformed() {
        byte[][] invalid = {
            {(byte) 0xFF},
            {'{', '"', 'i', 'd', '"', ':', '"', (byte) 0xC3, '(', '"', '}'},                 // bad continuation
            {'{', '"', 'i', 'd', '"', ':', '"', (byte) 0x80, '"', '}'},                       // lone continuation
            {'{', '"', 'i', 'd', '"', ':', '"', (byte) 0xFE, '"', '}'},
            {'{', '"', 'i', 'd', '"', ':', '"', (byte) 0xE6, (byte) 0xA4, '"', '}'},           // truncated sequence
            {'{', '"', 'i', (byte) 0xFF, '"', ':', '1', '}'},                                  // in a member name
            {'{', '"', 'i', 'd', '"', ':', (byte) 0xC3, (byte) 0xA9, '}'},                      // outside a string
            {'{', '"', 'i', 'd', '"', ':', '"', (byte) 0xF0, (byte) 0x9F, (byte) 0x98, '"', '}'},
        };
        for (byte[] input : invalid) {
            Envelope envelope = sniffAtEverySize(input);
            assertThat(envelope.kind()).as(new String(input, StandardCharsets.ISO_8859_1))
                    .isEqualTo(MessageKind.MALFORMED);
        }
    }

    // ---------------------------------------------------------------- one sniffer, many messages

    @Test
    void keepsWorkingAfterMalformedAndCleanMessages() {
        List<String> messages = List.of(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}",
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}",  // truncated
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"b\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}} 12",  // trailing number
                "345}",                                             // must not see the 12 above
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}} \"text}",  // trailing unterminated string
                "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}",      // must not be read as that string's end
                "6",
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}",
                "   ",
                "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}  \t ",   // trailing whitespace
                "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{}}",
                "\"bare\"",
                "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"m\"}",
                "[{\"id\":11,\"method\":\"a\"},{\"id\":12,\"result\":1}]",
                "garbage",
                "{\"id\":13,\"method\":\"m\"}{\"id\":14}",
                "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"ping\"}",
                "",
                "[",
                "{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"ping\"}",
                "17",
                "{\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"ping\"}");
        List<Envelope> expected = new ArrayList<>();
        for (String message : messages) {
            expected.add(sniff(message)); // each on a fresh sniffer
        }
        List<byte[]> inputs = messages.stream().map(EnvelopeSnifferTest::bytes).toList();
        List<Envelope> shared = Fragments.assertSameAtEverySize(inputs, EnvelopeSnifferTest::sniffSequence);
        assertThat(shared).containsExactlyElementsOf(expected);
        // Spot checks of what "expected" holds.
        assertThat(shared.get(1).kind()).isEqualTo(MessageKind.MALFORMED);
        assertThat(shared.get(2)).isEqualTo(Envelope.ofObject("2.0", true, 3L, "tools/call", "b", false, false));
        assertThat(shared.get(3).kind()).isEqualTo(MessageKind.MALFORMED);
        assertThat(shared.get(4).kind()).isEqualTo(MessageKind.MALFORMED);
        assertThat(shared.get(5).kind()).isEqualTo(MessageKind.MALFORMED);
        assertThat(shared.get(6)).isEqualTo(Envelope.ofObject("2.0", true, 6L, null, null, true, false));
        assertThat(shared.get(7)).isEqualTo(Envelope.ofOther());
        assertThat(shared.get(10)).isEqualTo(Envelope.ofObject("2.0", true, 8L, null, null, true, false));
        assertThat(shared.get(22)).isEqualTo(Envelope.ofObject("2.0", true, 18L, "ping", null, false, false));
    }

    @Test
    void trailingWhitespaceInItsOwnPieceThenTheNextMessage() {
        // A message ends cleanly, whitespace arrives in a later piece, then the next message.
        EnvelopeSniffer sniffer = new EnvelopeSniffer();
        byte[] first = bytes("{\"id\":1,\"result\":1}");
        sniffer.feed(first, 0, first.length);
        sniffer.feed(bytes("   "), 0, 3);
        assertThat(sniffer.finish()).isEqualTo(Envelope.ofObject(null, true, 1L, null, null, true, false));
        byte[] next = bytes("{\"id\":2,\"result\":2}");
        sniffer.feed(next, 0, next.length);
        assertThat(sniffer.finish()).isEqualTo(Envelope.ofObject(null, true, 2L, null, null, true, false));
    }

    @Test
    void aTrailingNumberDoesNotLeakIntoTheNextMessage() {
        EnvelopeSniffer sniffer = new EnvelopeSniffer();
        assertThat(sniffer.sniff(Unpooled.wrappedBuffer(bytes("{\"id\":1,\"result\":1} 12"))).kind())
                .isEqualTo(MessageKind.MALFORMED);
        // Were "12" still in the parser, "3" would read as 123, or "}" as its end.
        assertThat(sniffer.sniff(Unpooled.wrappedBuffer(bytes("3")))).isEqualTo(Envelope.ofOther());
        assertThat(sniffer.sniff(Unpooled.wrappedBuffer(bytes("{\"id\":2,\"result\":1}"))).id()).isEqualTo(2L);
    }

    @Test
    void sniffLeavesTheBufferIndexesAlone() {
        ByteBuf buf = Fragments.buffer(ALLOC, bytes("{\"id\":1,\"method\":\"m\"}"), 2);
        try {
            int reader = buf.readerIndex();
            int writer = buf.writerIndex();
            new EnvelopeSniffer().sniff(buf);
            assertThat(buf.readerIndex()).isEqualTo(reader);
            assertThat(buf.writerIndex()).isEqualTo(writer);
        } finally {
            buf.release();
        }
    }

    @Test
    void neverThrowsOnMutatedMessages() {
        // Fixed seed: the same mutations every run. Each result must not depend on the cut, and a
        // shared sniffer must agree with a fresh one after every mutated message.
        Random random = new Random(20250101L);
        byte[] base = bytes("{\"jsonrpc\":\"2.0\",\"id\":\"\u00e9\",\"method\":\"tools/call\",\"params\":{\"name\":"
                + "\"\ud83d\udd0d\",\"arguments\":{\"q\":[1,2.5e-3,true,null]}}}");
        byte[] specials = bytes("{}[]\":,\\ 0-9eE.+tfn\u00e9\n");
        EnvelopeSniffer shared = new EnvelopeSniffer();
        for (int round = 0; round < 400; round++) {
            byte[] mutated = base.clone();
            int edits = 1 + random.nextInt(3);
            for (int e = 0; e < edits; e++) {
                int at = random.nextInt(mutated.length);
                mutated[at] = random.nextBoolean() ? specials[random.nextInt(specials.length)] : (byte) random.nextInt(256);
            }
            if (random.nextInt(4) == 0) {
                mutated = Arrays.copyOf(mutated, random.nextInt(mutated.length + 1));
            }
            // Byte arrays only: the buffer layouts are covered above, and this loop is long.
            Envelope fresh = comparable(sniffArrays(new EnvelopeSniffer(), List.of(mutated)));
            for (int size : new int[] {1, 2, 3, 7, 13}) {
                assertThat(comparable(sniffArrays(new EnvelopeSniffer(), Fragments.split(mutated, size))))
                        .as("round %d, size %d: %s", round, size, new String(mutated, StandardCharsets.UTF_8))
                        .isEqualTo(fresh);
            }
            assertThat(comparable(sniffArrays(shared, Fragments.split(mutated, 1 + round % 17))))
                    .as("round %d, shared sniffer: %s", round, new String(mutated, StandardCharsets.UTF_8))
                    .isEqualTo(fresh);
        }
    }

    // ---------------------------------------------------------------- helpers

    /** Runs the check, prefixing a failure with the input it was about. */
    private static <T> T describedAs(String input, Supplier<T> check) {
        try {
            return check.get();
        } catch (AssertionError e) {
            throw new AssertionError("input: " + input + "\n" + e.getMessage(), e);
        }
    }

    private static Object idOf(String idJson) {
        Envelope envelope = sniff("{\"jsonrpc\":\"2.0\",\"id\":" + idJson + ",\"method\":\"m\"}");
        assertThat(envelope.hasId()).isTrue();
        assertThat(envelope.kind()).isEqualTo(MessageKind.REQUEST);
        return envelope.id();
    }

    /**
     * Sniffs whole and at every fragment size on fresh sniffers; all must agree. For malformed
     * input only the verdict must agree: the reason is the parser's own wording, which depends on
     * where it noticed the problem (a cut can make it notice a byte earlier or later).
     */
    static Envelope sniff(String json) {
        return sniffAtEverySize(bytes(json));
    }

    static Envelope sniffAtEverySize(byte[] input) {
        return Fragments.assertSameAtEverySize(input,
                chunks -> comparable(sniffChunks(new EnvelopeSniffer(), chunks)));
    }

    private static List<Envelope> sniffSequence(List<List<byte[]>> inputs) {
        EnvelopeSniffer sniffer = new EnvelopeSniffer();
        List<Envelope> envelopes = new ArrayList<>();
        for (List<byte[]> chunks : inputs) {
            envelopes.add(comparable(sniffChunks(sniffer, chunks)));
        }
        return envelopes;
    }

    /** The envelope, with a malformed one's reason replaced by a fixed one once checked non-blank. */
    static Envelope comparable(Envelope envelope) {
        if (envelope.kind() != MessageKind.MALFORMED) {
            return envelope;
        }
        assertThat(envelope.malformedReason()).isNotBlank();
        return MALFORMED;
    }

    /**
     * Feeds the chunks in turn as a heap buffer, a direct buffer, buffers with junk around the
     * readable bytes, and a byte array with junk around the range; then finishes.
     */
    static Envelope sniffChunks(EnvelopeSniffer sniffer, List<byte[]> chunks) {
        for (int i = 0; i < chunks.size(); i++) {
            byte[] chunk = chunks.get(i);
            int variant = i % 5;
            if (variant == 4) {
                ByteArrayOutputStream padded = new ByteArrayOutputStream();
                padded.writeBytes(bytes("}\"\n"));
                padded.writeBytes(chunk);
                padded.writeBytes(bytes("{\"x"));
                sniffer.feed(padded.toByteArray(), 3, 3 + chunk.length);
            } else {
                ByteBuf buf = Fragments.buffer(ALLOC, chunk, variant);
                try {
                    sniffer.feed(buf);
                } finally {
                    buf.release();
                }
            }
        }
        return sniffer.finish();
    }

    private static Envelope sniffArrays(EnvelopeSniffer sniffer, List<byte[]> chunks) {
        for (byte[] chunk : chunks) {
            sniffer.feed(chunk, 0, chunk.length);
        }
        return sniffer.finish();
    }

    private static List<List<String>> permutations(List<String> items) {
        if (items.isEmpty()) {
            return List.of(List.of());
        }
        List<List<String>> result = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            List<String> rest = new ArrayList<>(items);
            String first = rest.remove(i);
            for (List<String> tail : permutations(rest)) {
                List<String> permutation = new ArrayList<>();
                permutation.add(first);
                permutation.addAll(tail);
                result.add(permutation);
            }
        }
        return result;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
