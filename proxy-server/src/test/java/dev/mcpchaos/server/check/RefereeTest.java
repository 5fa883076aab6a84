package dev.mcpchaos.server.check;

import dev.mcpchaos.core.frame.Direction;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each check on the smallest conversation that breaks it, beside the same conversation done
 * right (which must fire nothing): a check that cannot fail, or fires on good traffic, fails here.
 */
class RefereeTest {

    static final String INIT = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
            + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    static final String INIT_OK = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\","
            + "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}";
    static final String INITIALIZED = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    static final String LIST = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}";
    static final String LIST_OK = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"echo\","
            + "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"string\"}}}}]}}";
    static final String CALL = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
            + "\"arguments\":{\"m\":\"hi\"}}}";
    static final String CALL_OK = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\","
            + "\"text\":\"hi\"}]}}";

    /** A conversation: lines prefixed "> " (client to server) or "< " (server to client). */
    private static Referee.Report run(Duration deadline, long gapNanos, String... lines) {
        Referee referee = new Referee(deadline);
        long t = 0;
        int i = 0;
        for (String line : lines) {
            Direction d = line.startsWith("> ") ? Direction.CLIENT_TO_SERVER : Direction.SERVER_TO_CLIENT;
            boolean partial = line.startsWith("<~");
            referee.observe(new Referee.Message("s", "stdio", d, i++, t, line.substring(2).trim(), true, partial));
            t += gapNanos;
        }
        referee.finish();
        return referee.report();
    }

    private static Referee.Report run(String... lines) {
        return run(Duration.ofSeconds(60), 1_000_000, lines);
    }

    private static String[] good(String... replaced) {
        List<String> lines = new ArrayList<>(List.of("> " + INIT, "< " + INIT_OK, "> " + INITIALIZED, "> " + LIST,
                "< " + LIST_OK, "> " + CALL, "< " + CALL_OK));
        for (int i = 0; i + 1 < replaced.length; i += 2) {
            int at = lines.indexOf(replaced[i]);
            assertThat(at).as("line to replace: " + replaced[i]).isNotNegative();
            if (replaced[i + 1] == null) {
                lines.remove(at);
            } else {
                lines.set(at, replaced[i + 1]);
            }
        }
        return lines.toArray(String[]::new);
    }

    @Test
    void aGoodConversationBreaksNothing() {
        Referee.Report report = run(good());
        assertThat(report.firedIds()).isEmpty();
        assertThat(report.messages()).isEqualTo(7);
    }

    @Test
    void aLogLineOnStdoutIsShownWithItsLine() {
        Referee.Report report = run(good("< " + LIST_OK, "< Server started on stdio with key sk-proj4Fq9XbT2mK7LwZ3vR8nY",
                "> " + CALL, null, "< " + CALL_OK, null));
        assertThat(report.firedIds()).containsExactly("jsonrpc.unanswered-request", "stdio.stdout-not-json");
        Violation v = report.violations().get(Check.STDOUT_NOT_JSON).get(0);
        assertThat(v.excerpt()).startsWith("Server started on stdio").doesNotContain("4Fq9XbT2mK7");
        assertThat(v.dir()).isEqualTo("s2c");
    }

    @Test
    void aBannerBetweenGoodMessagesFiresOnlyTheFramingCheck() {
        List<String> lines = new ArrayList<>(List.of(good()));
        lines.add(2, "< MCP server ready");
        lines.add("< 42");
        Referee.Report report = run(lines.toArray(String[]::new));
        assertThat(report.firedIds()).containsExactly("stdio.stdout-not-json");
        assertThat(report.count(Check.STDOUT_NOT_JSON)).isEqualTo(2);
    }

    @Test
    void anUnterminatedLastLine() {
        assertThat(run(good("< " + CALL_OK, "<~" + CALL_OK)).firedIds()).containsExactly("stdio.unterminated-line");
    }

    @Test
    void notJsonFromTheClient() {
        List<String> lines = new ArrayList<>(List.of(good()));
        lines.add("> {\"jsonrpc\":\"2.0\",");
        assertThat(run(lines.toArray(String[]::new)).firedIds()).containsExactly("jsonrpc.not-json");
    }

    @Test
    void invalidEnvelopes() {
        assertThat(run(good("< " + CALL_OK, "< " + CALL_OK.replace("\"2.0\"", "\"1.0\""))).firedIds())
                .containsExactly("jsonrpc.invalid-envelope");
        assertThat(run(good("> " + CALL, "> " + CALL.replace("\"id\":3", "\"id\":3.5"), "< " + CALL_OK, null))
                .firedIds()).containsExactly("jsonrpc.invalid-envelope");
        assertThat(run(good("> " + CALL, "> " + CALL.replace("\"method\":\"tools/call\"", "\"method\":7"),
                "< " + CALL_OK, null)).firedIds()).containsExactly("jsonrpc.invalid-envelope");
    }

    @Test
    void resultAndError() {
        assertThat(run(good("< " + CALL_OK, "< " + CALL_OK.replace("}]}}", "}]},\"error\":{\"code\":-32603,"
                + "\"message\":\"x\"}}"))).firedIds()).containsExactly("jsonrpc.result-and-error");
    }

    @Test
    void duplicateRequestIdInFlight() {
        Referee.Report report = run("> " + INIT, "< " + INIT_OK, "> " + INITIALIZED, "> " + CALL, "> " + CALL,
                "< " + CALL_OK, "< " + CALL_OK);
        assertThat(report.firedIds()).contains("jsonrpc.duplicate-request-id");
        // an id used again after its answer came is no duplicate
        assertThat(run("> " + INIT, "< " + INIT_OK, "> " + INITIALIZED, "> " + CALL, "< " + CALL_OK, "> " + CALL,
                "< " + CALL_OK).firedIds()).isEmpty();
    }

    @Test
    void aResponseWithAnIdNobodySent() {
        List<String> lines = new ArrayList<>(List.of(good()));
        lines.add("< " + CALL_OK.replace("\"id\":3", "\"id\":99"));
        Referee.Report report = run(lines.toArray(String[]::new));
        assertThat(report.firedIds()).containsExactly("jsonrpc.response-unknown-id");
        assertThat(report.violations().get(Check.RESPONSE_UNKNOWN_ID).get(0).id()).isEqualTo(99L);
        lines.add("< " + CALL_OK); // answered twice
        assertThat(run(lines.toArray(String[]::new)).count(Check.RESPONSE_UNKNOWN_ID)).isEqualTo(2);
    }

    @Test
    void unansweredAtTheEndAndLateBeyondTheDeadline() {
        assertThat(run(good("< " + CALL_OK, null)).firedIds()).containsExactly("jsonrpc.unanswered-request");
        // 3 s between messages, deadline 2 s: each answer is late, and reported once, as late (not as unknown)
        Referee.Report late = run(Duration.ofSeconds(2), 3_000_000_000L, good());
        assertThat(late.firedIds()).containsExactly("jsonrpc.unanswered-request");
        assertThat(late.count(Check.UNANSWERED_REQUEST)).isEqualTo(3);
        assertThat(late.violations().get(Check.UNANSWERED_REQUEST).get(0).detail()).contains("within 2s");
        // the same with a deadline of 10 s: nothing
        assertThat(run(Duration.ofSeconds(10), 3_000_000_000L, good()).firedIds()).isEmpty();
        // a cancelled request need not be answered
        assertThat(run(good("< " + CALL_OK, "> {\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                + "\"params\":{\"requestId\":3}}")).firedIds()).isEmpty();
    }

    @Test
    void aCancelledRequestAnsweredAnywayIsAWarningAndOneAnsweredBeforeTheCancelIsNot() {
        String cancel = "> {\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":3}}";
        List<String> cancelledThenAnswered = new ArrayList<>(List.of(good()));
        cancelledThenAnswered.add(cancelledThenAnswered.indexOf("< " + CALL_OK), cancel);
        Referee.Report answered = run(cancelledThenAnswered.toArray(String[]::new));
        assertThat(answered.firedIds()).containsExactly("jsonrpc.cancelled-answered");
        assertThat(answered.violations().get(Check.CANCELLED_ANSWERED).get(0).detail())
                .contains("id 3 (tools/call, #5) was answered after the client cancelled it");
        assertThat(answered.failsAt(Severity.ERROR)).isFalse();
        // twin: the answer came first, then a cancel that crossed it: nothing (and no unknown id)
        List<String> answeredThenCancelled = new ArrayList<>(List.of(good()));
        answeredThenCancelled.add(cancel);
        assertThat(run(answeredThenCancelled.toArray(String[]::new)).firedIds()).isEmpty();
        // cancelled, then answered after the deadline: still this warning, not an unknown id
        Referee.Report late = run(Duration.ofSeconds(2), 3_000_000_000L, cancelledThenAnswered.toArray(String[]::new));
        assertThat(late.firedIds()).contains("jsonrpc.cancelled-answered").doesNotContain("jsonrpc.response-unknown-id");
    }

    @Test
    void errorCodes() {
        String err = "< {\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":%s,\"message\":\"no\"}}";
        assertThat(run(good("< " + CALL_OK, err.formatted("-32500"))).firedIds()).containsExactly("jsonrpc.error-code");
        assertThat(run(good("< " + CALL_OK, err.formatted("\"bad\""))).firedIds()).containsExactly("jsonrpc.error-code");
        for (String fine : List.of("-32602", "-32700", "-32002", "-32042", "-1", "400")) {
            // (on a listed tool called with valid arguments, a server's own code is tools.business-error's to judge)
            assertThat(run(good("< " + CALL_OK, err.formatted(fine))).firedIds()).as(fine)
                    .doesNotContain("jsonrpc.error-code");
        }
    }

    @Test
    void requestsBeforeInitialize() {
        Referee.Report report = run("> " + LIST, "< " + LIST_OK, "> " + INIT, "< " + INIT_OK, "> " + INITIALIZED);
        assertThat(report.firedIds()).containsExactly("lifecycle.before-initialize");
        assertThat(run("> {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}", "< {\"jsonrpc\":\"2.0\",\"id\":9,"
                + "\"result\":{}}", "> " + INIT, "< " + INIT_OK).firedIds()).isEmpty();
        assertThat(run("> " + INIT.replace("\"capabilities\":{}", "\"capabilities\":{\"roots\":{}}"),
                "< {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\"}", "< " + INIT_OK,
                "> {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{\"roots\":[]}}").firedIds())
                .containsExactly("lifecycle.before-initialize");
    }

    @Test
    void protocolVersion() {
        // The server's made-up version, and the client that went on with it (it should have disconnected).
        assertThat(run(good("< " + INIT_OK, "< " + INIT_OK.replace("2025-06-18", "2023-01-01"))).firedIds())
                .containsExactly("lifecycle.protocol-version", "lifecycle.unsupported-version-accepted");
        // Its twin: a client that stops there is not charged.
        assertThat(run("> " + INIT, "< " + INIT_OK.replace("2025-06-18", "2023-01-01")).firedIds())
                .containsExactly("lifecycle.protocol-version");
        // another published revision than the one asked for: the server does not speak it, which is allowed
        assertThat(run(good("< " + INIT_OK, "< " + INIT_OK.replace("2025-06-18", "2025-03-26"))).firedIds()).isEmpty();
    }

    @Test
    void capabilitiesNotDeclared() {
        String noTools = "< " + INIT_OK.replace("{\"tools\":{}}", "{}");
        assertThat(run(good("< " + INIT_OK, noTools)).firedIds()).containsExactly("lifecycle.undeclared-capability");
        List<String> lines = new ArrayList<>(List.of(good()));
        lines.add("< {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}");
        lines.add("< {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\","
                + "\"data\":\"x\"}}");
        Referee.Report report = run(lines.toArray(String[]::new));
        assertThat(report.firedIds()).containsExactly("lifecycle.undeclared-capability");
        assertThat(report.count(Check.UNDECLARED_CAPABILITY)).isEqualTo(2);
        String declared = "< " + INIT_OK.replace("{\"tools\":{}}", "{\"tools\":{\"listChanged\":true},\"logging\":{}}");
        lines.set(1, declared);
        assertThat(run(lines.toArray(String[]::new)).firedIds()).isEmpty();
    }

    private static String listWith(String tools) {
        return "< {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[" + tools + "]}}";
    }

    @Test
    void toolSchemas() {
        String notObject = "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"string\"}}";
        assertThat(run(good("< " + LIST_OK, listWith(notObject))).firedIds()).containsExactly("tools.input-schema");
        String missing = "{\"name\":\"echo\"}";
        assertThat(run(good("< " + LIST_OK, listWith(missing))).firedIds()).containsExactly("tools.input-schema");
        String badKeyword = "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"m\":{\"type\":"
                + "\"strin\"}},\"required\":\"m\"}}";
        Referee.Report report = run(good("< " + LIST_OK, listWith(badKeyword)));
        assertThat(report.firedIds()).containsExactly("tools.input-schema");
        assertThat(report.violations().get(Check.INPUT_SCHEMA).get(0).detail()).contains("meta-schema");
        String badOutput = "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"},\"outputSchema\":{\"type\":"
                + "\"object\",\"properties\":{\"n\":{\"minimum\":\"zero\"}}}}";
        assertThat(run(good("< " + LIST_OK, listWith(badOutput))).firedIds()).containsExactly("tools.output-schema");
        String draft7 = "{\"name\":\"echo\",\"inputSchema\":{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
                + "\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"string\"}},\"additionalProperties\":false},"
                + "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":0}}}}";
        // With an outputSchema the call's result carries structuredContent (tools.structured-content).
        assertThat(run(good("< " + LIST_OK, listWith(draft7), "< " + CALL_OK,
                "< " + callResult(",\"structuredContent\":{\"n\":0}"))).firedIds()).isEmpty();
    }

    @Test
    void toolNames() {
        String two = "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"echo\",\"inputSchema\":"
                + "{\"type\":\"object\"}}";
        assertThat(run(good("< " + LIST_OK, listWith(two))).firedIds()).containsExactly("tools.duplicate-name");
        String spaced = "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"send mail\","
                + "\"inputSchema\":{\"type\":\"object\"}}";
        assertThat(run(good("< " + LIST_OK, listWith(spaced))).firedIds()).containsExactly("tools.name-format");
        String fine = "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"admin.tools-list_V2\","
                + "\"inputSchema\":{\"type\":\"object\"}}";
        assertThat(run(good("< " + LIST_OK, listWith(fine))).firedIds()).isEmpty();
    }

    @Test
    void anUnknownToolAnsweredWithAResult() {
        String call = "> " + CALL.replace("\"echo\"", "\"nope\"");
        assertThat(run(good("> " + CALL, call)).firedIds()).containsExactly("tools.unknown-tool-result");
        String refused = "< {\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,\"message\":\"Unknown tool: nope\"}}";
        assertThat(run(good("> " + CALL, call, "< " + CALL_OK, refused)).firedIds()).isEmpty();
        // after list_changed the list is stale: no verdict until the next tools/list
        List<String> stale = new ArrayList<>(List.of(good("> " + CALL, call)));
        stale.add(5, "< {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}");
        stale.set(1, "< " + INIT_OK.replace("{\"tools\":{}}", "{\"tools\":{\"listChanged\":true}}"));
        assertThat(run(stale.toArray(String[]::new)).firedIds()).isEmpty();
    }

    @Test
    void violationsAreCappedPerCheckAndCounted() {
        List<String> lines = new ArrayList<>(List.of(good()));
        for (int i = 0; i < 500; i++) {
            lines.add("< log line " + i);
        }
        Referee.Report report = run(lines.toArray(String[]::new));
        assertThat(report.count(Check.STDOUT_NOT_JSON)).isEqualTo(500);
        assertThat(report.violations().get(Check.STDOUT_NOT_JSON)).hasSize(Referee.KEPT_PER_CHECK);
        assertThat(report.failsAt(Severity.ERROR)).isTrue();
    }

    @Test
    void requestsInFlightAreBounded() {
        Referee referee = new Referee();
        for (int i = 0; i < Referee.MAX_IN_FLIGHT + 5; i++) {
            referee.observe(new Referee.Message("s", "stdio", Direction.CLIENT_TO_SERVER, i, i,
                    "{\"jsonrpc\":\"2.0\",\"id\":" + i + ",\"method\":\"ping\"}", true, false));
        }
        referee.finish();
        Referee.Report report = referee.report();
        assertThat(report.untracked()).isEqualTo(5);
        assertThat(report.count(Check.UNANSWERED_REQUEST)).isEqualTo(Referee.MAX_IN_FLIGHT);
    }

    // ---- the 2026-07-28 request metadata (sessionless HTTP: each request its own session) ----

    private static final String META = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
            + "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"t\",\"version\":\"1\"},"
            + "\"io.modelcontextprotocol/clientCapabilities\":{}}";

    /** One sessionless request with these headers (name, value, ...), and its answer. */
    private static Referee.Report modern(String request, String... headers) {
        java.util.Map<String, String> mcp = new java.util.TreeMap<>();
        for (int i = 0; i + 1 < headers.length; i += 2) {
            mcp.put(headers[i].toLowerCase(java.util.Locale.ROOT), headers[i + 1]);
        }
        Referee referee = new Referee();
        referee.observe(new Referee.Message("http-1", "http-1", Direction.CLIENT_TO_SERVER, 0, 0, request, false, false,
                mcp));
        referee.observe(new Referee.Message("http-1", "http-1", Direction.SERVER_TO_CLIENT, 1, 1000,
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}", false, false));
        referee.finish();
        return referee.report();
    }

    private static final String MODERN_CALL = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
            + "\"params\":{\"name\":\"get_weather\",\"arguments\":{}," + META + "}}";

    @Test
    void aSessionlessRequestWithItsHeadersRightBreaksNothingNotEvenTheMissingInitialize() {
        assertThat(modern(MODERN_CALL, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call",
                "Mcp-Name", "get_weather").firedIds()).isEmpty();
        // A Base64 sentinel name is decoded before it is compared.
        assertThat(modern(MODERN_CALL, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call",
                "Mcp-Name", "=?base64?" + java.util.Base64.getEncoder().encodeToString("get_weather".getBytes(
                        java.nio.charset.StandardCharsets.UTF_8)) + "?=").firedIds()).isEmpty();
        String read = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{\"uri\":"
                + "\"file:///a.txt\"," + META + "}}";
        assertThat(modern(read, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "resources/read",
                "Mcp-Name", "file:///a.txt").firedIds()).isEmpty();
    }

    @Test
    void eachMissingOrLyingHeaderFiresItsOwnCheck() {
        Referee.Report none = modern(MODERN_CALL);
        assertThat(none.firedIds()).containsExactly("http.mcp-method-header", "http.mcp-name-header",
                "http.protocol-version-header");
        assertThat(none.violations().get(Check.MCP_NAME_HEADER).get(0).detail())
                .isEqualTo("no Mcp-Name header; params.name 'get_weather'");

        Referee.Report wrongVersion = modern(MODERN_CALL, "MCP-Protocol-Version", "2025-11-25", "Mcp-Method",
                "tools/call", "Mcp-Name", "get_weather");
        assertThat(wrongVersion.firedIds()).containsExactly("http.protocol-version-header");
        assertThat(wrongVersion.violations().get(Check.PROTOCOL_VERSION_HEADER).get(0).detail())
                .isEqualTo("MCP-Protocol-Version '2025-11-25' but _meta says '2026-07-28'");

        assertThat(modern(MODERN_CALL, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list",
                "Mcp-Name", "get_weather").firedIds()).containsExactly("http.mcp-method-header");
        assertThat(modern(MODERN_CALL, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call",
                "Mcp-Name", "=?base64?bm90IGl0?=").firedIds()).containsExactly("http.mcp-name-header");
    }

    @Test
    void theHeaderChecksStayOutOfStdioAndOfTheSessionRevisions() {
        Referee referee = new Referee();
        referee.observe(new Referee.Message("s", "stdio", Direction.CLIENT_TO_SERVER, 0, 0, MODERN_CALL, true, false));
        referee.observe(new Referee.Message("s", "stdio", Direction.SERVER_TO_CLIENT, 1, 1,
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}", true, false));
        referee.finish();
        assertThat(referee.report().firedIds()).as("stdio has no headers").isEmpty();
        // A 2025 request over HTTP without any Mcp-* header: no header check (only the lifecycle one).
        assertThat(modern(CALL.replace("\"id\":3", "\"id\":5")).firedIds()).containsExactly("lifecycle.before-initialize");
    }

    // ---- tools/call arguments and structured results against the listed schemas ----

    @Test
    void callArgumentsAreValidatedAgainstTheListedInputSchemaAndValidOnesPass() {
        assertThat(run(good()).firedIds()).as("m is a string, as listed").isEmpty();
        Referee.Report wrong = run(good("> " + CALL, "> " + CALL.replace("{\"m\":\"hi\"}", "{\"m\":5}")));
        // the client's fault, and the server's too, for answering it with success
        assertThat(wrong.firedIds()).containsExactly("tools.call-arguments", "tools.invalid-arguments-accepted");
        assertThat(wrong.violations().get(Check.CALL_ARGUMENTS).get(0).detail()).startsWith("tool 'echo': arguments ")
                .contains("/m").contains("string");
        // Before any tools/list, no verdict: the schema is not known.
        assertThat(run(good("> " + LIST, null, "< " + LIST_OK, null, "> " + CALL,
                "> " + CALL.replace("{\"m\":\"hi\"}", "{\"m\":5}"))).firedIds()).isEmpty();
    }

    private static final String LIST_WITH_OUTPUT = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":"
            + "\"echo\",\"inputSchema\":{\"type\":\"object\"},\"outputSchema\":{\"type\":\"object\",\"properties\":"
            + "{\"n\":{\"type\":\"integer\"}},\"required\":[\"n\"]}}]}}";

    private static String callResult(String members) {
        return "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"1\"}]"
                + members + "}}";
    }

    @Test
    void aToolWithAnOutputSchemaMustAnswerWithValidStructuredContent() {
        assertThat(run(good("< " + LIST_OK, "< " + LIST_WITH_OUTPUT, "< " + CALL_OK,
                "< " + callResult(",\"structuredContent\":{\"n\":1}"))).firedIds()).as("valid").isEmpty();
        assertThat(run(good("< " + LIST_OK, "< " + LIST_WITH_OUTPUT, "< " + CALL_OK,
                "< " + callResult(",\"isError\":true"))).firedIds()).as("a tool error needs none").isEmpty();
        Referee.Report missing = run(good("< " + LIST_OK, "< " + LIST_WITH_OUTPUT, "< " + CALL_OK, "< " + callResult("")));
        assertThat(missing.firedIds()).containsExactly("tools.structured-content");
        assertThat(missing.violations().get(Check.STRUCTURED_CONTENT).get(0).detail())
                .isEqualTo("tool 'echo' declares an outputSchema, but its result has no structuredContent");
        Referee.Report invalid = run(good("< " + LIST_OK, "< " + LIST_WITH_OUTPUT, "< " + CALL_OK,
                "< " + callResult(",\"structuredContent\":{\"n\":\"one\"}")));
        assertThat(invalid.firedIds()).containsExactly("tools.structured-content");
        assertThat(invalid.violations().get(Check.STRUCTURED_CONTENT).get(0).detail())
                .startsWith("tool 'echo': structuredContent ").contains("/n");
    }

    @Test
    void aListedToolsInputErrorAsAProtocolErrorIsAWarningFrom20251125AndOnlyThen() {
        String invalidParams = "< {\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,\"message\":\"m must be short\"}}";
        String init1125 = "> " + INIT.replace("2025-06-18", "2025-11-25");
        String ok1125 = "< " + INIT_OK.replace("2025-06-18", "2025-11-25");
        Referee.Report flagged = run(good("> " + INIT, init1125, "< " + INIT_OK, ok1125, "< " + CALL_OK, invalidParams));
        assertThat(flagged.firedIds()).containsExactly("tools.error-class");
        assertThat(flagged.violations().get(Check.ERROR_CLASS).get(0).detail())
                .startsWith("tool 'echo' (listed) answered with JSON-RPC error -32602 'm must be short' on 2025-11-25");
        // 2025-06-18 listed invalid arguments among the protocol errors; -32603 is the server failing (a
        // business failure as a protocol error: tools.business-error, not this check); an unlisted tool's
        // -32602 is right.
        assertThat(run(good("< " + CALL_OK, invalidParams)).firedIds()).isEmpty();
        assertThat(run(good("> " + INIT, init1125, "< " + INIT_OK, ok1125, "< " + CALL_OK,
                invalidParams.replace("-32602", "-32603"))).firedIds()).containsExactly("tools.business-error");
        assertThat(run(good("> " + INIT, init1125, "< " + INIT_OK, ok1125, "> " + CALL,
                "> " + CALL.replace("\"echo\"", "\"nope\""), "< " + CALL_OK, invalidParams)).firedIds()).isEmpty();
        // The twin: the same error class as a tool result passes.
        assertThat(run(good("> " + INIT, init1125, "< " + INIT_OK, ok1125, "< " + CALL_OK,
                "< " + callResult(",\"isError\":true"))).firedIds()).isEmpty();
    }

    @Test
    void aListedToolsOwnFailureAsAProtocolErrorIsAWarningAndAsAToolResultIsNot() {
        String error = "< {\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":%s,\"message\":\"row 7 is locked\"}}";
        // -32603 too: what an SDK makes of a tool that threw (issue #33: it went unflagged)
        for (String code : List.of("-32000", "-32019", "42", "-1", "-32603")) {
            Referee.Report flagged = run(good("< " + CALL_OK, error.formatted(code)));
            assertThat(flagged.firedIds()).as(code).containsExactly("tools.business-error");
            assertThat(flagged.violations().get(Check.BUSINESS_ERROR).get(0).detail()).startsWith(
                    "tool 'echo' (listed, arguments valid) answered with JSON-RPC error " + code + " 'row 7 is locked'");
        }
        // JSON-RPC's own codes, and MCP's URL elicitation required, are protocol errors by right
        for (String code : List.of("-32600", "-32601", "-32042", "-32020", "-32099", "-32002")) {
            assertThat(run(good("< " + CALL_OK, error.formatted(code))).firedIds()).as(code).isEmpty();
        }
        // the twin: the same failure as a tool result
        assertThat(run(good("< " + CALL_OK, "< " + callResult(",\"isError\":true"))).firedIds()).isEmpty();
        // arguments the schema refuses: the client's fault, not a business failure
        String badCall = "> " + CALL.replace("\"hi\"", "5");
        assertThat(run(good("> " + CALL, badCall, "< " + CALL_OK, error.formatted("-32000"))).firedIds())
                .containsExactly("tools.call-arguments");
        // no tools/list: no verdict on the arguments, so none on the error
        assertThat(run(good("> " + LIST, null, "< " + LIST_OK, null, "< " + CALL_OK, error.formatted("-32000")))
                .firedIds()).isEmpty();
    }

    @Test
    void invalidArgumentsAnsweredWithASuccessfulResultAreAWarningAndWithAToolErrorAreNot() {
        String badCall = "> " + CALL.replace("\"hi\"", "5");
        Referee.Report accepted = run(good("> " + CALL, badCall));
        assertThat(accepted.firedIds()).containsExactly("tools.call-arguments", "tools.invalid-arguments-accepted");
        assertThat(accepted.violations().get(Check.INVALID_ARGUMENTS_ACCEPTED).get(0).detail())
                .startsWith("tool 'echo' answered a call whose arguments its inputSchema refuses with a successful result");
        assertThat(run(good("> " + CALL, badCall, "< " + CALL_OK, "< " + callResult(",\"isError\":true"))).firedIds())
                .containsExactly("tools.call-arguments");
        assertThat(run(good("> " + CALL, badCall, "< " + CALL_OK,
                "< {\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32602,\"message\":\"m: not a string\"}}"))
                .firedIds()).containsExactly("tools.call-arguments");
    }

    // ---- 2026-07-28 custom headers from tool parameters (x-mcp-header, Mcp-Param-*) ----

    private static final String MODERN_LIST = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\",\"params\":{"
            + META + "}}";
    private static final String SQL_SCHEMA = "{\"type\":\"object\",\"properties\":{\"region\":{\"type\":\"string\","
            + "\"x-mcp-header\":\"Region\"},\"limits\":{\"type\":\"object\",\"properties\":{\"rows\":{\"type\":"
            + "\"integer\",\"x-mcp-header\":\"Rows\"}}},\"query\":{\"type\":\"string\"}}}";

    /** tools/list on one connection (a session of its own), then one call on another, with these headers. */
    private static Referee.Report listedThenCalled(String inputSchema, String arguments, String... headers) {
        Referee referee = new Referee();
        java.util.Map<String, String> listHeaders = java.util.Map.of("mcp-protocol-version", "2026-07-28",
                "mcp-method", "tools/list");
        referee.observe(new Referee.Message("http-1", "http-1", Direction.CLIENT_TO_SERVER, 0, 0, MODERN_LIST, false,
                false, listHeaders));
        referee.observe(new Referee.Message("http-1", "http-1", Direction.SERVER_TO_CLIENT, 1, 10,
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"tools\":[{\"name\":\"execute_sql\",\"inputSchema\":"
                        + inputSchema + "}]}}", false, false));
        java.util.Map<String, String> mcp = new java.util.TreeMap<>(java.util.Map.of("mcp-protocol-version",
                "2026-07-28", "mcp-method", "tools/call", "mcp-name", "execute_sql"));
        for (int i = 0; i + 1 < headers.length; i += 2) {
            mcp.put(headers[i].toLowerCase(java.util.Locale.ROOT), headers[i + 1]);
        }
        referee.observe(new Referee.Message("http-2", "http-2", Direction.CLIENT_TO_SERVER, 2, 20,
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"execute_sql\","
                        + "\"arguments\":" + arguments + "," + META + "}}", false, false, mcp));
        referee.observe(new Referee.Message("http-2", "http-2", Direction.SERVER_TO_CLIENT, 3, 30,
                "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[]}}", false, false));
        referee.finish();
        return referee.report();
    }

    @Test
    void mcpParamHeadersMirrorTheAnnotatedArgumentsAndEachMismatchIsFlagged() {
        String args = "{\"region\":\"us-west1\",\"limits\":{\"rows\":42},\"query\":\"SELECT 1\"}";
        assertThat(listedThenCalled(SQL_SCHEMA, args, "Mcp-Param-Region", "us-west1", "Mcp-Param-Rows", "42")
                .firedIds()).as("headers right, names any case, across two connections").isEmpty();
        assertThat(listedThenCalled(SQL_SCHEMA, args, "mcp-param-region", "=?base64?dXMtd2VzdDE=?=",
                "Mcp-Param-Rows", "42.0").firedIds()).as("a sentinel decoded, integers numerically").isEmpty();
        Referee.Report missing = listedThenCalled(SQL_SCHEMA, args, "Mcp-Param-Region", "us-west1");
        assertThat(missing.firedIds()).containsExactly("http.mcp-param-header");
        assertThat(missing.violations().get(Check.MCP_PARAM_HEADER).get(0).detail())
                .isEqualTo("no Mcp-Param-Rows header; arguments/limits/rows is 42");
        Referee.Report lying = listedThenCalled(SQL_SCHEMA, args, "Mcp-Param-Region", "eu-west1", "Mcp-Param-Rows",
                "42");
        assertThat(lying.violations().get(Check.MCP_PARAM_HEADER).get(0).detail())
                .isEqualTo("Mcp-Param-Region 'eu-west1' but arguments/region is \"us-west1\"");
        // a value the arguments do not have: no header expected, and one sent is flagged
        assertThat(listedThenCalled(SQL_SCHEMA, "{\"query\":\"SELECT 1\"}").firedIds()).isEmpty();
        Referee.Report extra = listedThenCalled(SQL_SCHEMA, "{\"query\":\"SELECT 1\"}", "Mcp-Param-Region", "x");
        assertThat(extra.firedIds()).containsExactly("http.mcp-param-header");
        assertThat(extra.violations().get(Check.MCP_PARAM_HEADER).get(0).detail())
                .isEqualTo("Mcp-Param-Region 'x' sent, but arguments/region has no value (expected: no header)");
    }

    @Test
    void anInvalidXMcpHeaderAnnotationMakesTheToolDefinitionInvalid() {
        String[] invalid = {
            "{\"type\":\"object\",\"properties\":{\"r\":{\"type\":\"string\",\"x-mcp-header\":\"Re gion\"}}}",
            "{\"type\":\"object\",\"properties\":{\"r\":{\"type\":\"number\",\"x-mcp-header\":\"R\"}}}",
            "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"Dup\"},"
                    + "\"b\":{\"type\":\"string\",\"x-mcp-header\":\"dup\"}}}",
            "{\"type\":\"object\",\"properties\":{\"l\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
                    + "\"x-mcp-header\":\"L\"}}}}",
            "{\"type\":\"object\",\"anyOf\":[{\"properties\":{\"r\":{\"type\":\"string\",\"x-mcp-header\":\"R\"}}}]}",
        };
        String[] why = {"is not an HTTP token", "is on a property of type \"number\"", "is used twice",
            "at /properties/l/items is not reachable", "at /anyOf/0/properties/r is not reachable"};
        for (int i = 0; i < invalid.length; i++) {
            Referee.Report report = listedThenCalled(invalid[i], "{}");
            assertThat(report.firedIds()).as(invalid[i]).containsExactly("tools.mcp-header-annotation");
            assertThat(report.violations().get(Check.MCP_HEADER_ANNOTATION).get(0).detail()).contains(why[i]);
        }
        // the twins: valid annotations, and none at all; and on 2025 sessions the annotation means nothing
        assertThat(listedThenCalled(SQL_SCHEMA, "{}").firedIds()).isEmpty();
        assertThat(listedThenCalled("{\"type\":\"object\"}", "{}").firedIds()).isEmpty();
        assertThat(run(good("< " + LIST_OK, "< " + LIST_OK.replace("\"type\":\"string\"",
                "\"type\":\"string\",\"x-mcp-header\":\"bad name\""))).firedIds()).isEmpty();
    }

    @Test
    void checksThatCouldNotRunAreNotRunNeverPassed() throws Exception {
        // A stdio session read offline, with no journal: the client.* checks lack the journal, the
        // live-only ones the live proxy, the HTTP and era ones their traffic.
        Referee.Report report = run(good());
        assertThat(report.firedIds()).isEmpty();
        assertThat(report.notRun()).containsKeys(Check.DUPLICATE_CALL, Check.RETRY_AFTER_IGNORED, Check.NO_REINITIALIZE,
                Check.EXIT_ON_STDIN_CLOSE, Check.UNTERMINATED_LINE, Check.MCP_NAME_HEADER, Check.ERROR_CLASS,
                Check.NEGOTIATED_VERSION_HEADER);
        assertThat(report.notRun().get(Check.DUPLICATE_CALL)).startsWith("needs the proxy's journal");
        assertThat(report.ran(Check.UNANSWERED_REQUEST)).isTrue();
        assertThat(report.ran(Check.STDOUT_NOT_JSON)).isTrue();

        String xml = CheckReports.junitXml(report, "suite");
        assertThat(xml).contains("skipped=\"" + report.notRun().size() + "\"")
                .containsPattern("name=\"client.duplicate-call\">\\s*<skipped message=\"not run: needs the proxy's journal")
                .doesNotContainPattern("name=\"jsonrpc.unanswered-request\">\\s*<skipped");
        com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(CheckReports.json(report));
        assertThat(json.path("not_run").asInt()).isEqualTo(report.notRun().size());
        for (com.fasterxml.jackson.databind.JsonNode check : json.path("checks")) {
            String status = check.path("status").asText();
            if (check.path("id").asText().equals("client.duplicate-call")) {
                assertThat(status).isEqualTo("not_run");
                assertThat(check.path("not_run").asText()).startsWith("needs the proxy's journal");
            }
            if (check.path("id").asText().equals("jsonrpc.unanswered-request")) {
                assertThat(status).isEqualTo("passed");
            }
        }
        assertThat(CheckReports.summary(report)).contains("check not run: client.duplicate-call, "
                + "client.retry-after-ignored, client.no-reinitialize (needs the proxy's journal");

        // With a journal the client checks run (and pass on an empty one); on a session of
        // 2025-11-25, error-class runs too.
        Referee withJournal = new Referee();
        withJournal.judgeClientsBy(() -> new dev.mcpchaos.rules.journal.JournalRing(10).snapshot());
        int i = 0;
        for (String line : good("> " + INIT, "> " + INIT.replace("2025-06-18", "2025-11-25"), "< " + INIT_OK,
                "< " + INIT_OK.replace("2025-06-18", "2025-11-25"))) {
            withJournal.observe(new Referee.Message("s", "stdio", line.startsWith("> ") ? Direction.CLIENT_TO_SERVER
                    : Direction.SERVER_TO_CLIENT, i++, i, line.substring(2), true, false));
        }
        withJournal.finish();
        assertThat(withJournal.report().ran(Check.DUPLICATE_CALL)).isTrue();
        assertThat(withJournal.report().ran(Check.ERROR_CLASS)).isTrue();
        assertThat(withJournal.report().notRun()).containsKey(Check.RETRY_AFTER_IGNORED); // HTTP only
    }
}
