package dev.mcpchaos.rules;

import dev.mcpchaos.rules.fault.BlackholeFault;
import dev.mcpchaos.rules.fault.CorruptFault;
import dev.mcpchaos.rules.fault.CrashFault;
import dev.mcpchaos.rules.fault.DisconnectFault;
import dev.mcpchaos.rules.fault.DropFault;
import dev.mcpchaos.rules.fault.DuplicateFault;
import dev.mcpchaos.rules.fault.ErrorFault;
import dev.mcpchaos.rules.fault.FaultType;
import dev.mcpchaos.rules.fault.HeaderMismatchFault;
import dev.mcpchaos.rules.fault.HttpStatusFault;
import dev.mcpchaos.rules.fault.IdMismatchFault;
import dev.mcpchaos.rules.fault.InputRequiredFault;
import dev.mcpchaos.rules.fault.InvalidContentTypeFault;
import dev.mcpchaos.rules.fault.LatencyFault;
import dev.mcpchaos.rules.fault.MutateFault;
import dev.mcpchaos.rules.fault.NoiseFault;
import dev.mcpchaos.rules.fault.OversizeFault;
import dev.mcpchaos.rules.fault.ReorderFault;
import dev.mcpchaos.rules.fault.GetStreamDropFault;
import dev.mcpchaos.rules.fault.PrimingDropFault;
import dev.mcpchaos.rules.fault.ResumeGapFault;
import dev.mcpchaos.rules.fault.ResumeRepeatFault;
import dev.mcpchaos.rules.fault.SessionExpireFault;
import dev.mcpchaos.rules.fault.SseRetryFault;
import dev.mcpchaos.rules.fault.ThrottleFault;
import dev.mcpchaos.rules.fault.ToolErrorFault;
import dev.mcpchaos.rules.fault.TruncateFault;

import java.time.Duration;
import java.util.Objects;

/**
 * A rule in one line of Java, one factory per fault type of {@code docs/rules.md}, each taking
 * the rule's name and the fault's required parameters; the other keys (match, {@code probability},
 * {@code after}, {@code times}, {@code start}, {@code duration}, optional parameters) are chained
 * on the {@link RuleDraft}:
 *
 * <pre>{@code
 * Rules.latency("slow", Duration.ofMillis(300)).onTool("search*").onResponses()
 * Rules.drop("lose-answer").onMethod("tools/call").onResponses().times(1)
 * Rules.httpStatus("busy", 503).header("Retry-After", "1").onRequests()
 * Rules.error("overloaded", -32000, "Server overloaded").onTool("fetch").probability(0.2)
 * }</pre>
 *
 * A draft is checked by the rule file parser when it is used, so every limit and message is the
 * rule file's.
 */
public final class Rules {

    private Rules() {
    }

    private static RuleDraft draft(String name, FaultType type) {
        return new RuleDraft(Objects.requireNonNull(name, "name"), type.name());
    }

    /**
     * A rule with a fault of {@code type}, its parameters set with {@link RuleDraft#param}: any
     * fault {@link dev.mcpchaos.rules.fault.FaultRegistry} lists, such as
     * {@code Rules.fault("slow", LatencyFault.TYPE).param("latency", Duration.ofMillis(300))}.
     */
    public static RuleDraft fault(String name, FaultType type) {
        return draft(name, Objects.requireNonNull(type, "type"));
    }

    /** {@code latency}: the message is held {@code latency}, then handed on. */
    public static RuleDraft latency(String name, Duration latency) {
        return draft(name, LatencyFault.TYPE).param("latency", Objects.requireNonNull(latency, "latency"));
    }

    /** {@code latency} with a spread: uniform in {@code latency ± jitter} unless {@link RuleDraft#distribution} says otherwise. */
    public static RuleDraft latency(String name, Duration latency, Duration jitter) {
        return latency(name, latency).jitter(Objects.requireNonNull(jitter, "jitter"));
    }

    /** {@code drop}: the message disappears. */
    public static RuleDraft drop(String name) {
        return draft(name, DropFault.TYPE);
    }

    /** {@code duplicate}: the message is sent twice. */
    public static RuleDraft duplicate(String name) {
        return draft(name, DuplicateFault.TYPE);
    }

    /** {@code duplicate}: the message is sent {@code 1 + copies} times. */
    public static RuleDraft duplicate(String name, int copies) {
        return duplicate(name).param("copies", copies);
    }

    /** {@code reorder}: matched messages are collected {@code window} at a time and released shuffled. */
    public static RuleDraft reorder(String name, int window) {
        return draft(name, ReorderFault.TYPE).param("window", window);
    }

    /** {@code reorder} without a window: each matched message is held a random time up to {@code hold}. */
    public static RuleDraft reorder(String name, Duration hold) {
        return draft(name, ReorderFault.TYPE).hold(Objects.requireNonNull(hold, "hold"));
    }

    /** {@code truncate}: half the message is kept. */
    public static RuleDraft truncate(String name) {
        return draft(name, TruncateFault.TYPE);
    }

    /** {@code truncate}: this part of the message, from 0 to 1, is kept ({@code fraction}). */
    public static RuleDraft truncate(String name, double fraction) {
        return truncate(name).param("fraction", fraction);
    }

    /** {@code truncate}: the message is cut after {@code bytes} bytes ({@code at}). */
    public static RuleDraft truncateAt(String name, long bytes) {
        return truncate(name).param("at", bytes);
    }

    /** {@code corrupt}: the message becomes malformed JSON ({@code truncated_json}). */
    public static RuleDraft corrupt(String name) {
        return draft(name, CorruptFault.TYPE);
    }

    /** {@code corrupt} in this {@code mode}, such as {@code invalid_escape} or {@code garbage}. */
    public static RuleDraft corrupt(String name, String mode) {
        return corrupt(name).param("mode", Objects.requireNonNull(mode, "mode"));
    }

    /** {@code oversize}: the message is padded to {@code bytes} bytes, still valid. */
    public static RuleDraft oversize(String name, long bytes) {
        return draft(name, OversizeFault.TYPE).param("size", bytes);
    }

    /** {@code oversize} to a size as a rule file writes it, such as {@code 10MiB}. */
    public static RuleDraft oversize(String name, String size) {
        return draft(name, OversizeFault.TYPE).param("size", Objects.requireNonNull(size, "size"));
    }

    /** {@code error}: a JSON-RPC error ({@code -32603}) takes the place of the answer. */
    public static RuleDraft error(String name) {
        return draft(name, ErrorFault.TYPE);
    }

    /** {@code error} with this code and message. */
    public static RuleDraft error(String name, int code, String message) {
        return error(name).param("code", code).param("message", Objects.requireNonNull(message, "message"));
    }

    /** {@code tool_error}: a {@code tools/call} fails the MCP way, a result with {@code isError}. */
    public static RuleDraft toolError(String name) {
        return draft(name, ToolErrorFault.TYPE);
    }

    /** {@code tool_error} with this text. */
    public static RuleDraft toolError(String name, String text) {
        return toolError(name).param("text", Objects.requireNonNull(text, "text"));
    }

    /** {@code http_status} (HTTP only): the POST is answered with {@code status} instead of being forwarded. */
    public static RuleDraft httpStatus(String name, int status) {
        return draft(name, HttpStatusFault.TYPE).param("status", status);
    }

    /** {@code invalid_content_type} (HTTP only): the answer claims {@code text/html}. */
    public static RuleDraft invalidContentType(String name) {
        return draft(name, InvalidContentTypeFault.TYPE);
    }

    /** {@code invalid_content_type} (HTTP only): the answer claims {@code contentType}. */
    public static RuleDraft invalidContentType(String name, String contentType) {
        return invalidContentType(name).param("content_type", Objects.requireNonNull(contentType, "contentType"));
    }

    /** {@code disconnect}: the server's side of the connection is closed at this message. */
    public static RuleDraft disconnect(String name) {
        return draft(name, DisconnectFault.TYPE);
    }

    /** {@code disconnect} of this {@code side}: {@code client} or {@code server}. */
    public static RuleDraft disconnect(String name, String side) {
        return disconnect(name).param("side", Objects.requireNonNull(side, "side"));
    }

    /** {@code blackhole}: the message is swallowed and the connection kept open. */
    public static RuleDraft blackhole(String name) {
        return draft(name, BlackholeFault.TYPE);
    }

    /** {@code throttle} at a rate, such as {@code 64KiB/s} ({@code rate}). */
    public static RuleDraft throttle(String name, String rate) {
        return draft(name, ThrottleFault.TYPE).param("rate", Objects.requireNonNull(rate, "rate"));
    }

    /** {@code throttle}: {@code chunkBytes} bytes every {@code interval}. */
    public static RuleDraft throttle(String name, long chunkBytes, Duration interval) {
        return draft(name, ThrottleFault.TYPE).param("chunk", chunkBytes)
                .param("interval", Objects.requireNonNull(interval, "interval"));
    }

    /** {@code noise}: a stray non-JSON-RPC line before the message. */
    public static RuleDraft noise(String name) {
        return draft(name, NoiseFault.TYPE);
    }

    /** {@code noise} with this text (one line). */
    public static RuleDraft noise(String name, String text) {
        return noise(name).param("text", Objects.requireNonNull(text, "text"));
    }

    /**
     * {@code mutate}: schema drift by a JSON Patch, its operations chained with
     * {@link RuleDraft#operation} and {@link RuleDraft#operationFrom}:
     * {@code Rules.mutate("drift").onResponses().onMethod("tools/list").operation("remove", "/result/tools/1", null)}.
     */
    public static RuleDraft mutate(String name) {
        return draft(name, MutateFault.TYPE);
    }

    /** {@code id_mismatch}: a response carries an id the client never used. */
    public static RuleDraft idMismatch(String name) {
        return draft(name, IdMismatchFault.TYPE);
    }

    /** {@code id_mismatch} to this id (a number or a string). */
    public static RuleDraft idMismatch(String name, Object id) {
        return idMismatch(name).param("id", Objects.requireNonNull(id, "id"));
    }

    /** {@code session_expire} (HTTP only): the session's requests are answered 404 from this message on. */
    public static RuleDraft sessionExpire(String name) {
        return draft(name, SessionExpireFault.TYPE);
    }

    /**
     * {@code sse_retry} (HTTP only): the message's SSE event gets a {@code retry:} field of
     * {@code retry}, asking the client to wait that long before it reconnects.
     */
    public static RuleDraft sseRetry(String name, Duration retry) {
        return draft(name, SseRetryFault.TYPE).param("retry", Objects.requireNonNull(retry, "retry"));
    }

    /** {@code resume_gap} (HTTP only): the message is skipped on a stream the client resumed with {@code Last-Event-ID}. */
    public static RuleDraft resumeGap(String name) {
        return draft(name, ResumeGapFault.TYPE);
    }

    /** {@code resume_repeat} (HTTP only): the message is sent twice on a stream the client resumed with {@code Last-Event-ID}. */
    public static RuleDraft resumeRepeat(String name) {
        return draft(name, ResumeRepeatFault.TYPE);
    }

    /** {@code get_stream_drop} (HTTP only): at a message on a GET stream, the client's connection is closed. */
    public static RuleDraft getStreamDrop(String name) {
        return draft(name, GetStreamDropFault.TYPE);
    }

    /**
     * {@code priming_drop} (HTTP only): the priming events (message-less, with an id) before the
     * matched message, its SSE stream's first, are removed.
     */
    public static RuleDraft primingDrop(String name) {
        return draft(name, PrimingDropFault.TYPE);
    }

    /** {@code crash} (stdio only): the server is killed at this message. */
    public static RuleDraft crash(String name) {
        return draft(name, CrashFault.TYPE);
    }

    /** {@code crash} (stdio only) with this signal: {@code KILL} or {@code TERM}. */
    public static RuleDraft crash(String name, String signal) {
        return crash(name).param("signal", Objects.requireNonNull(signal, "signal"));
    }

    /**
     * {@code input_required} (2026-07-28): the answer to a {@code tools/call}, {@code prompts/get}
     * or {@code resources/read} becomes one more {@code input_required} round, with a fresh
     * {@code requestState}; without {@code times}, the rounds never end.
     */
    public static RuleDraft inputRequired(String name) {
        return draft(name, InputRequiredFault.TYPE);
    }

    /**
     * {@code header_mismatch} (HTTP only, 2026-07-28): the request is refused {@code 400} with
     * {@code -32020} {@code HeaderMismatch}, naming {@code header} (such as {@code Mcp-Name}).
     */
    public static RuleDraft headerMismatch(String name, String header) {
        return draft(name, HeaderMismatchFault.TYPE).param("header", Objects.requireNonNull(header, "header"));
    }
}
