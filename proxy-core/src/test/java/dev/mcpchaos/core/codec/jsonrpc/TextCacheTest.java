package dev.mcpchaos.core.codec.jsonrpc;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link TextCache}: repeated texts come back as the same string, and a lookup never returns another text. */
class TextCacheTest {

    private final TextCache cache = new TextCache();

    @Test
    void aRepeatedAsciiTextIsTheSameStringWhereverItLies() {
        byte[] first = ascii("{\"method\":\"notifications/message\"}");
        byte[] second = ascii("xx notifications/message yy");
        String text = cache.ofAscii(first, 11, 21);
        assertThat(text).isEqualTo("notifications/message");
        assertThat(cache.ofAscii(second, 3, 21)).isSameAs(text);
        assertThat(cache.ofAscii(ascii("2.0"), 0, 3)).isEqualTo("2.0").isSameAs(cache.ofAscii(ascii(" 2.0"), 1, 3));
        assertThat(cache.ofAscii(new byte[0], 0, 0)).isEmpty();
    }

    @Test
    void twoTextsOfOneSlotThatComeInTurnAreBothKept() {
        // "tools/call" and "echo" hash to the same slot: a tools/call request names both.
        String method = cache.ofAscii(ascii("tools/call"), 0, 10);
        String tool = cache.ofAscii(ascii("echo"), 0, 4);
        for (int i = 0; i < 3; i++) {
            assertThat(cache.ofAscii(ascii("tools/call"), 0, 10)).isSameAs(method);
            assertThat(cache.ofAscii(ascii("echo"), 0, 4)).isSameAs(tool);
            assertThat(cache.of("tools/call".toCharArray(), 0, 10)).isSameAs(method);
            assertThat(cache.of("echo".toCharArray(), 0, 4)).isSameAs(tool);
        }
    }

    @Test
    void bothPathsShareTheirTexts() {
        String fromChars = cache.of("tools/call".toCharArray(), 0, 10);
        assertThat(cache.ofAscii(ascii("tools/call"), 0, 10)).isSameAs(fromChars);
        String fromBytes = cache.ofAscii(ascii("resources/templates/list"), 0, 24);
        assertThat(cache.of("..resources/templates/list".toCharArray(), 2, 24)).isSameAs(fromBytes);
        String shortOne = cache.of("abc".toCharArray(), 0, 3);
        assertThat(cache.ofAscii(ascii("abc"), 0, 3)).isSameAs(shortOne);
    }

    @Test
    void textsThatDifferOnlyInTheMiddleAreNeverTakenForEachOther() {
        // Same length, same first and last eight bytes: the same slot, by design.
        String a = "notifications/A/message";
        String b = "notifications/B/message";
        for (int i = 0; i < 3; i++) {
            assertThat(cache.ofAscii(ascii(a), 0, a.length())).isEqualTo(a);
            assertThat(cache.ofAscii(ascii(b), 0, b.length())).isEqualTo(b);
            assertThat(cache.of(a.toCharArray(), 0, a.length())).isEqualTo(a);
        }
    }

    @Test
    void aNonAsciiTextIsNeverReturnedForAsciiBytes() {
        // U+0161 hashes as its low byte, 'a': the same slot as "abc".
        String accented = cache.of("\u0161bc".toCharArray(), 0, 3);
        assertThat(accented).isEqualTo("\u0161bc");
        assertThat(cache.ofAscii(ascii("abc"), 0, 3)).isEqualTo("abc");
        assertThat(cache.of("\u0161bc".toCharArray(), 0, 3)).isEqualTo("\u0161bc");
    }

    @Test
    void longTextsAreDecodedButNotCached() {
        String longText = "m".repeat(TextCache.MAX_CACHED_LENGTH + 1);
        String one = cache.ofAscii(ascii(longText), 0, longText.length());
        assertThat(one).isEqualTo(longText);
        assertThat(cache.ofAscii(ascii(longText), 0, longText.length())).isEqualTo(longText).isNotSameAs(one);
        assertThat(cache.of(longText.toCharArray(), 0, longText.length())).isEqualTo(longText);
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }
}
