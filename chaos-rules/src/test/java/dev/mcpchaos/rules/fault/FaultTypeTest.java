package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.transport.TransportKind;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The descriptor a fault declares in its own file, and the parameter reader it hands its factory. */
class FaultTypeTest {

    private static final Fault NOTHING = new Fault() {
        @Override
        public String type() {
            return "test";
        }

        @Override
        public void apply(FaultContext ctx, dev.mcpchaos.core.frame.Frame frame) {
            ctx.proceed(frame);
        }
    };

    @Test
    void aKeyTheTypeDoesNotDeclareIsRefusedBeforeTheFactoryRunsNamingTheKeyTheTypeAndTheKeysItTakes() {
        FaultType type = FaultType.of("slow", params -> {
            params.duration("delay", null); // would say "delay: missing" if it ran first
            return NOTHING;
        }, FaultParameter.required("delay"), FaultParameter.optional("spread", "0s"));
        assertThatThrownBy(() -> type.create(FaultParams.of(Map.of("dealy", "1s"))))
                .isInstanceOf(InvalidParameterException.class)
                .hasMessage("dealy: unknown key (expected: a parameter of slow: one of delay, spread)");
        assertThatThrownBy(() -> FaultType.of("still", p -> NOTHING).create(FaultParams.of(Map.of("x", 1))))
                .hasMessage("x: unknown key (expected: no parameter: still takes none)");
    }

    @Test
    void aDeclaredKeyTheFactoryNeverLookedAtIsRefusedRatherThanIgnored() {
        FaultType type = FaultType.of("slow", params -> {
            params.duration("delay", Duration.ZERO);
            return NOTHING;
        }, FaultParameter.optional("delay", "0s"), FaultParameter.optional("forgotten", "none"));
        assertThat(type.create(FaultParams.of(Map.of("delay", "1s")))).isSameAs(NOTHING);
        assertThatThrownBy(() -> type.create(FaultParams.of(Map.of("forgotten", 3))))
                .isInstanceOf(InvalidParameterException.class)
                .hasMessage("forgotten: 3 (expected: no value: slow does not use it with the other parameters given)");
    }

    @Test
    void aKeyLookedAtWithHasCountsAsReadAndANullValueAsAbsent() {
        FaultType type = FaultType.of("pick", params -> {
            params.has("either");
            return NOTHING;
        }, FaultParameter.optional("either", ""), FaultParameter.optional("or", ""));
        assertThat(type.create(FaultParams.of(Map.of("either", 1)))).isSameAs(NOTHING);
        java.util.Map<String, Object> withNull = new java.util.HashMap<>();
        withNull.put("or", null);
        assertThat(type.create(FaultParams.of(withNull))).isSameAs(NOTHING);
    }

    @Test
    void aFactoryReadingAKeyItsTypeDoesNotDeclareIsTheFaultsBugNotTheRuleFiles() {
        FaultType type = FaultType.of("sloppy", params -> {
            params.string("colour", "red", "a colour");
            return NOTHING;
        });
        assertThatThrownBy(() -> type.create(FaultParams.none()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("sloppy reads parameter 'colour', which its FaultType does not declare (declared: [])");
    }

    @Test
    void aDescriptorIsWellFormed() {
        assertThatThrownBy(() -> FaultType.of("Slow", p -> NOTHING))
                .hasMessage("name: 'Slow' (expected: lower case words joined by _)");
        assertThatThrownBy(() -> FaultType.of("slow", p -> NOTHING, FaultParameter.required("a"),
                FaultParameter.optional("a", "1")))
                .hasMessage("slow: parameter 'a' declared twice");
        assertThatThrownBy(() -> FaultParameter.required("type"))
                .hasMessage("name: 'type' (expected: a key other than type)");
        FaultType httpOnly = FaultType.of("answer", p -> NOTHING).only(TransportKind.HTTP);
        assertThat(httpOnly.supports(TransportKind.HTTP)).isTrue();
        assertThat(httpOnly.supports(TransportKind.STDIO)).isFalse();
    }

    @Test
    void everyRegisteredFaultAnswersWithItsOwnDescriptor() {
        for (FaultType type : FaultRegistry.all()) {
            assertThat(FaultRegistry.find(type.name())).containsSame(type);
            for (TransportKind transport : TransportKind.values()) {
                Fault fault = create(type);
                assertThat(fault.type()).as(type.name()).isEqualTo(type.name());
                assertThat(fault.supports(transport)).as(type + " on " + transport)
                        .isEqualTo(type.supports(transport));
            }
        }
        assertThat(FaultRegistry.find("latncy")).isEmpty();
    }

    /**
     * A fault of {@code type} from the fewest parameters it takes: none, or those below. A new
     * fault that needs some fails here with its own "missing" message until it has a line.
     */
    private static Fault create(FaultType type) {
        return type.create(FaultParams.of(FEWEST.getOrDefault(type.name(), Map.of())));
    }

    private static final Map<String, Map<String, Object>> FEWEST = Map.of(
            "latency", Map.of("latency", "10ms"),
            "reorder", Map.of("window", 2),
            "oversize", Map.of("size", "1KiB"),
            "http_status", Map.of("status", 503),
            "throttle", Map.of("rate", "1KiB/s"),
            "sse_retry", Map.of("retry", "3s"),
            "mutate", Map.of("patch", java.util.List.of(Map.of("op", "remove", "path", "/x"))));

    @Test
    void whatAFaultDoesBeyondItsMessageIsDeclaredInItsFile() {
        Map<String, FaultType.Effect> effects = new java.util.TreeMap<>();
        FaultRegistry.all().forEach(type -> effects.put(type.name(), type.effect()));
        assertThat(effects).containsEntry("latency", FaultType.Effect.HOLDS)
                .containsEntry("throttle", FaultType.Effect.HOLDS)
                .containsEntry("reorder", FaultType.Effect.HOLDS)
                .containsEntry("crash", FaultType.Effect.ENDS_CONNECTION)
                .containsEntry("disconnect", FaultType.Effect.ENDS_CONNECTION)
                .containsEntry("drop", FaultType.Effect.NONE);
        FaultType plain = FaultType.of("plain_one", params -> null);
        assertThat(plain.effect()).isEqualTo(FaultType.Effect.NONE);
        assertThat(plain.effect(FaultType.Effect.HOLDS).only(TransportKind.HTTP).effect()).isEqualTo(FaultType.Effect.HOLDS);
    }
}
