package dev.mcpchaos.server.events;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.frame.MessageKind;
import dev.mcpchaos.core.intercept.ObservingInterceptor;
import dev.mcpchaos.core.intercept.InterceptorContext;
import dev.mcpchaos.core.observe.TransportObserver;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.FaultEvent;
import dev.mcpchaos.rules.FaultListener;
import dev.mcpchaos.rules.Rule;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.rules.RulesListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.math.BigDecimal;
import java.time.Clock;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The event log: one JSON object per line for every injected fault and every notable event
 * (session start, end and expiry, a message that is not JSON, a limit breach, an upstream failure), with
 * a sequence number and a timestamp. It names messages by direction, kind, JSON-RPC id, method
 * and tool; it never writes a message's content, a header or an argument, so no secret reaches it.
 * A fault's event may carry the SHA-256 of the message's {@code params.arguments} (see
 * {@link FaultEvent#argumentsSha256()}), which tells calls apart without showing them.
 *
 * <p>The lines go to a stream (a file, stderr) and/or a {@link EventRing} of recent events that
 * the control endpoint serves. Thread-safe: lines are written whole, one at a time, and flushed
 * at once.
 */
public final class EventLog implements FaultListener, RulesListener, TransportObserver, ObservingInterceptor,
        AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EventLog.class);
    private static final JsonFactory JSON = new JsonFactory();
    private static final Pattern QUOTED = Pattern.compile("'[^']*'|\"[^\"]*\"");

    private final OutputStream out;
    private final boolean closeOut;
    private final EventRing ring;
    private final Clock clock;
    private long sequence;
    private volatile boolean failed;

    /**
     * @param out where the lines go, or null for none
     * @param closeOut whether {@link #close()} closes {@code out} (a file: yes; stderr: no)
     * @param ring keeps the recent events for the control endpoint, or null
     */
    public EventLog(OutputStream out, boolean closeOut, EventRing ring) {
        this(out, closeOut, ring, Clock.systemUTC());
    }

    EventLog(OutputStream out, boolean closeOut, EventRing ring, Clock clock) {
        this.out = out;
        this.closeOut = closeOut;
        this.ring = ring;
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public void onFault(FaultEvent event) {
        write("fault", event.session(), g -> {
            g.writeStringField("direction", tag(event.direction()));
            g.writeStringField("rule", event.rule());
            g.writeStringField("fault", event.fault());
            g.writeStringField("kind", event.kind().name().toLowerCase(Locale.ROOT));
            writeId(g, event.id());
            writeOptional(g, "method", event.method());
            writeOptional(g, "tool", event.tool());
            writeOptional(g, "detail", event.detail().isEmpty() ? null : event.detail());
            // A digest, never the arguments: enough to tell calls apart or match a known call.
            writeOptional(g, "arguments_sha256", event.argumentsSha256());
        });
    }

    /**
     * Watches for messages that are not JSON; {@link #onFrame} forwards every frame untouched. An
     * observer, so that it does not make a transport pass an SSE stream's every event through the
     * chain when nothing else acts on them.
     */
    @Override
    public void observe(InterceptorContext ctx, Frame frame) {
        if (frame.envelope().kind() == MessageKind.MALFORMED) {
            write("parse_error", ctx.session().id(), g -> {
                g.writeStringField("transport", tag(ctx.transport()));
                g.writeStringField("direction", tag(frame.direction()));
                g.writeNumberField("size", frame.contentLength());
                g.writeStringField("reason", redact(frame.envelope().malformedReason()));
            });
        }
    }

    @Override
    public void sessionStarted(TransportKind transport, String sessionId) {
        write("session_started", sessionId, g -> g.writeStringField("transport", tag(transport)));
    }

    @Override
    public void sessionEnded(TransportKind transport, String sessionId) {
        write("session_ended", sessionId, g -> g.writeStringField("transport", tag(transport)));
    }

    @Override
    public void sessionExpired(TransportKind transport, String sessionId, SessionExpiry reason) {
        writeTransport("session_expired", sessionId, transport, "reason", reason.tag());
    }

    @Override
    public void limitBreached(TransportKind transport, Limit limit, Direction direction, long size) {
        write("limit_breach", null, g -> {
            g.writeStringField("transport", tag(transport));
            g.writeStringField("limit", limit.tag());
            if (direction != null) {
                g.writeStringField("direction", tag(direction));
            }
            if (size >= 0) {
                g.writeNumberField("size", size);
            }
        });
    }

    @Override
    public void upstreamFailed(TransportKind transport, UpstreamFailure reason, String detail) {
        writeTransport("upstream_failure", null, transport, "reason", reason.tag());
    }

    @Override
    public void clientTimedOut(TransportKind transport, ClientDeadline deadline) {
        writeTransport("client_timeout", null, transport, "phase", deadline.tag());
    }

    @Override
    public void messageDiscarded(TransportKind transport, String sessionId, Direction direction, MessageKind kind,
                                 Object id, String method, DiscardReason reason) {
        write("message_discarded", sessionId, g -> {
            g.writeStringField("transport", tag(transport));
            g.writeStringField("direction", tag(direction));
            g.writeStringField("kind", tag(kind));
            writeId(g, id);
            writeOptional(g, "method", method);
            g.writeStringField("reason", reason.tag());
        });
    }

    /** The ring of recent events, or null. */
    public EventRing ring() {
        return ring;
    }

    /** A change of the rules or of the panic switch, by the control API or a reload of the rule file. */
    @Override
    public void rulesChanged(String cause, RuleSet rules, boolean faultsEnabled) {
        write("rules_changed", null, g -> {
            g.writeStringField("cause", cause);
            g.writeNumberField("rules", rules.rules().size());
            g.writeNumberField("enabled", rules.rules().stream().filter(Rule::enabled).count());
            g.writeBooleanField("faults_enabled", faultsEnabled);
        });
    }

    /** A rule file edit that could not be used; the rules in force stay. */
    public void rulesRefused(String cause, String problem) {
        write("rules_refused", null, g -> {
            g.writeStringField("cause", cause);
            g.writeStringField("problem", problem);
        });
    }

    /** A graceful drain began (SIGTERM): connections with an exchange in flight, and the timeout. */
    public void drainStarted(int inFlight, long timeoutMillis) {
        write("drain_started", null, g -> {
            g.writeNumberField("in_flight", inFlight);
            g.writeNumberField("timeout_ms", timeoutMillis);
        });
    }

    /**
     * A graceful drain ended: of the exchanges in flight, how many finished by themselves, how
     * many SSE streams the proxy ended, how many requests it answered 503, how many it cut.
     */
    public void drainEnded(int inFlight, int finished, int ended, int answered, int cut, int idleClosed,
                           long tookMillis) {
        write("drain_ended", null, g -> {
            g.writeNumberField("in_flight", inFlight);
            g.writeNumberField("finished", finished);
            g.writeNumberField("ended", ended);
            g.writeNumberField("answered", answered);
            g.writeNumberField("cut", cut);
            g.writeNumberField("idle_closed", idleClosed);
            g.writeNumberField("took_ms", tookMillis);
        });
    }

    @Override
    public void close() {
        if (closeOut && out != null) {
            try {
                out.close();
            } catch (IOException e) {
                log.debug("closing the event log failed: {}", e.toString());
            }
        }
    }

    /** Writes the fields of one event after its common ones. */
    @FunctionalInterface
    private interface Fields {
        void write(JsonGenerator g) throws IOException;
    }

    /** An event whose fields are its transport and one more tag: why, or which phase. */
    private void writeTransport(String type, String session, TransportKind transport, String key, String value) {
        write(type, session, g -> {
            g.writeStringField("transport", tag(transport));
            g.writeStringField(key, value);
        });
    }

    private void write(String type, String session, Fields fields) {
        synchronized (this) {
            long seq = ++sequence;
            String line;
            try (StringWriter text = new StringWriter(160); JsonGenerator g = JSON.createGenerator(text)) {
                g.writeStartObject();
                g.writeNumberField("seq", seq);
                g.writeStringField("time", clock.instant().toString());
                g.writeStringField("event", type);
                if (session != null) {
                    g.writeStringField("session", session);
                }
                fields.write(g);
                g.writeEndObject();
                g.flush();
                line = text.toString();
            } catch (IOException e) {
                throw new UncheckedIOException(e); // a StringWriter does not fail
            }
            if (ring != null) {
                ring.add(seq, line);
            }
            if (out != null && !failed) {
                try {
                    out.write(line.getBytes(StandardCharsets.UTF_8));
                    out.write('\n');
                    out.flush();
                } catch (IOException e) {
                    failed = true; // one warning, not one per event: the traffic is not held up for the log
                    log.warn("the event log cannot be written any more: {}", e.toString());
                }
            }
        }
    }

    private static void writeId(JsonGenerator g, Object id) throws IOException {
        if (id instanceof Long) {
            g.writeNumberField("id", (Long) id);
        } else if (id instanceof BigDecimal) {
            g.writeNumberField("id", (BigDecimal) id);
        } else if (id instanceof String) {
            g.writeStringField("id", (String) id);
        }
    }

    private static void writeOptional(JsonGenerator g, String name, String value) throws IOException {
        if (value != null) {
            g.writeStringField(name, value);
        }
    }

    /**
     * The parser's reason without the pieces of the message it quotes ({@code Unrecognized token
     * 'sk-...'}): those are the message's content, which may be a secret.
     */
    static String redact(String reason) {
        return reason == null ? null : QUOTED.matcher(reason).replaceAll("'…'");
    }

    private static String tag(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return "EventLog";
    }
}
