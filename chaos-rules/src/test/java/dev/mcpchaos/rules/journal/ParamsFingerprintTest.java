package dev.mcpchaos.rules.journal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ParamsFingerprintTest {

    private static String of(String message) {
        ByteBuf direct = Unpooled.directBuffer().writeBytes(message.getBytes(StandardCharsets.UTF_8));
        try {
            String fromDirect = ParamsFingerprint.of(direct);
            assertThat(ParamsFingerprint.of(message)).as("same from text and from a direct buffer").isEqualTo(fromDirect);
            return fromDirect;
        } finally {
            direct.release();
        }
    }

    @Test
    void sameParamsWhateverTheOrderSpacingNumberFormOrMeta() {
        String a = of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"w\","
                + "\"arguments\":{\"row\":7,\"tags\":[\"a\",\"b\"],\"x\":1.5}}}");
        String b = of("{ \"params\" : { \"_meta\" : {\"progressToken\": 9}, \"arguments\" : { \"x\" : 15e-1,"
                + " \"tags\":[\"a\",\"b\"], \"row\" : 7.00 }, \"name\" : \"w\" }, \"method\":\"tools/call\","
                + " \"id\": 2, \"jsonrpc\":\"2.0\"}");
        assertThat(a).hasSize(16).matches("[0-9a-f]{16}").isEqualTo(b);
        assertThat(ParamsFingerprint.ofParams("{\"name\":\"w\",\"arguments\":{\"row\":7,\"tags\":[\"a\",\"b\"],"
                + "\"x\":1.5}}")).isEqualTo(a);
    }

    @Test
    void differentParamsDiffer() {
        String base = of("{\"id\":1,\"method\":\"m\",\"params\":{\"a\":[1,2]}}");
        assertThat(of("{\"id\":1,\"method\":\"m\",\"params\":{\"a\":[2,1]}}")).isNotEqualTo(base);
        assertThat(of("{\"id\":1,\"method\":\"m\",\"params\":{\"a\":[1,2],\"b\":null}}")).isNotEqualTo(base);
        assertThat(of("{\"id\":1,\"method\":\"m\",\"params\":{\"a\":\"[1,2]\"}}")).isNotEqualTo(base);
        // _meta is left out only at the top of params, not inside the arguments
        assertThat(of("{\"id\":1,\"method\":\"m\",\"params\":{\"a\":[1,2],\"x\":{\"_meta\":1}}}"))
                .isNotEqualTo(of("{\"id\":1,\"method\":\"m\",\"params\":{\"a\":[1,2],\"x\":{}}}"));
    }

    @Test
    void noParamsOrBrokenJsonHasNone() {
        assertThat(of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")).isNull();
        assertThat(of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":")).isNull();
        assertThat(of("[1,2]")).isNull();
        assertThatThrownBy(() -> ParamsFingerprint.ofParams("{\"a\":1} 2")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("params: {\"a\":1} 2 (expected: one JSON value)");
    }

    @Test
    void readsTheRequestIdACancellationNames() {
        ByteBuf n = Unpooled.copiedBuffer("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                + "\"params\":{\"requestId\":12,\"reason\":\"timeout\"}}", StandardCharsets.UTF_8);
        ByteBuf s = Unpooled.copiedBuffer("{\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"a-1\"}}",
                StandardCharsets.UTF_8);
        try {
            assertThat(ParamsFingerprint.requestId(n)).isEqualTo(12L);
            assertThat(ParamsFingerprint.requestId(s)).isEqualTo("a-1");
            assertThat(n.readerIndex()).isZero();
        } finally {
            n.release();
            s.release();
        }
    }

    private static ParamsFingerprint.Fingerprints both(String message) {
        ByteBuf direct = Unpooled.directBuffer().writeBytes(message.getBytes(StandardCharsets.UTF_8));
        try {
            ParamsFingerprint.Fingerprints fingerprints = ParamsFingerprint.ofRequest(direct);
            assertThat(direct.readerIndex()).isZero();
            if (fingerprints != null) {
                assertThat(fingerprints.params()).as("the params fingerprint is the one of()").isEqualTo(of(message));
            }
            return fingerprints;
        } finally {
            direct.release();
        }
    }

    private static String call(String arguments) {
        return "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"write\","
                + "\"arguments\":" + arguments + "}}";
    }

    @Test
    void theWriteFingerprintSeesThroughAFreshIdempotencyKey() {
        ParamsFingerprint.Fingerprints first = both(call("{\"row\":7,\"request_id\":\"a1\"}"));
        ParamsFingerprint.Fingerprints again = both(call("{\"request_id\":\"b2\",\"row\":7}"));
        assertThat(again.params()).as("the exact fingerprint still tells them apart").isNotEqualTo(first.params());
        assertThat(again.write()).as("the same write under a new key").isEqualTo(first.write());
        assertThat(first.write()).as("a key alone is no write: not the fingerprint of the key-less call either way")
                .isEqualTo(both(call("{\"row\":7}")).write());

        // The names compare ignoring case, '-', '_' and '.'
        for (String key : new String[] {"requestId", "Idempotency-Key", "idempotency_key", "idempotencyKey",
            "dedupe_key", "client_request_id", "X-Request-ID", "clientToken", "deduplication.id"}) {
            assertThat(both(call("{\"row\":7,\"" + key + "\":\"k-" + key + "\"}")).write()).as(key)
                    .isEqualTo(first.write());
        }
    }

    @Test
    void theWriteFingerprintStillTellsRealArgumentsApart() {
        String write = both(call("{\"row\":7,\"request_id\":\"a1\"}")).write();
        assertThat(both(call("{\"row\":8,\"request_id\":\"a1\"}")).write()).isNotEqualTo(write);
        // A key-like name deeper in the arguments is data, not the call's key.
        assertThat(both(call("{\"row\":7,\"meta\":{\"request_id\":\"x\"}}")).write())
                .isNotEqualTo(both(call("{\"row\":7,\"meta\":{\"request_id\":\"y\"}}")).write());
        // A name that merely contains a key's name is an argument.
        assertThat(both(call("{\"row\":7,\"request_ids\":[1]}")).write())
                .isNotEqualTo(both(call("{\"row\":7,\"request_ids\":[2]}")).write());
        // Only the arguments' keys: another member of params with that name is compared.
        assertThat(both("{\"id\":1,\"method\":\"m\",\"params\":{\"requestId\":1}}").write())
                .isNotEqualTo(both("{\"id\":1,\"method\":\"m\",\"params\":{\"requestId\":2}}").write());
    }

    @Test
    void withoutAKeyTheWriteFingerprintIsTheParamsFingerprint() {
        ParamsFingerprint.Fingerprints plain = both(call("{\"row\":7}"));
        assertThat(plain.write()).isSameAs(plain.params());
        assertThat(both("{\"id\":1,\"method\":\"ping\"}")).isNull();
        assertThat(both("{\"id\":1,\"method\":\"m\",\"params\":[1]}").write()).isEqualTo(of(
                "{\"id\":1,\"method\":\"m\",\"params\":[1]}"));
        assertThat(ParamsFingerprint.writeOfParams("{\"name\":\"write\",\"arguments\":{\"row\":7,"
                + "\"idempotencyKey\":\"z\"},\"_meta\":{\"progressToken\":3}}")).isEqualTo(plain.write());
        assertThatThrownBy(() -> ParamsFingerprint.writeOfParams("{"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("params: { (expected: JSON; ");
    }
}
