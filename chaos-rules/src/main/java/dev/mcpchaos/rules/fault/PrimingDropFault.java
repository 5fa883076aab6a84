package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.codec.sse.SseFields;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code priming_drop} (HTTP only): the priming events of an SSE stream, the message-less events
 * with an id that came before its first message, are removed; the message goes on unchanged. The
 * 2025-11-25 transport has the server SHOULD send one first "to prime the client to reconnect
 * (using that event ID as Last-Event-ID)" ("Sending Messages to the Server", item 6): without it,
 * a stream cut before its first message leaves the client nothing to resume with.
 *
 * <p>An event without a message has no envelope a rule could match, so the rule matches the
 * stream's first message (by its method, or the request it answers), and the transport, while
 * such a rule exists, holds the leading events back and hands them on with that message
 * ({@link SseFields#leading()}); the fault's event is then the message's. A message that is not
 * its stream's first, or whose stream had no priming event, a message in a JSON body, or the
 * client's: nothing to do.
 */
public final class PrimingDropFault extends DeclaredFault {

    /** {@code priming_drop}: its name in rule files, no parameters, HTTP only; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("priming_drop", PrimingDropFault::create)
            .only(TransportKind.HTTP);

    /** The fault; it takes no parameters. */
    public PrimingDropFault() {
        super(TYPE);
    }

    static PrimingDropFault create(FaultParams params) {
        return new PrimingDropFault();
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        if (!SseStreams.onSseEvent(ctx, frame)) {
            return;
        }
        if (!(frame.framing() instanceof SseFields fields) || !fields.hasLeading()) {
            ctx.nothingToDo(frame, "no priming event came before it (not its stream's first message, "
                    + "or the stream had none)");
            return;
        }
        List<String> ids = eventIds(fields.leading());
        ctx.detail("removed " + (ids.size() == 1 ? "the priming event" : ids.size() + " priming events")
                + " before it" + IDS_OPEN + String.join(IDS_SEPARATOR, ids) + ")");
        frame.framing(fields.withoutLeading());
        ctx.proceed(frame);
    }

    private static final String IDS_OPEN = " (id ";
    private static final String IDS_SEPARATOR = ", ";

    /**
     * The ids of the priming events a {@code priming_drop} removed, read back from the detail it
     * reported (the journal keeps a fault's detail as text); empty for any other detail. Written
     * and read here, so the two cannot drift apart.
     */
    public static List<String> removedIds(String detail) {
        int open = detail.lastIndexOf(IDS_OPEN);
        if (open < 0 || !detail.endsWith(")")) {
            return List.of();
        }
        return List.of(detail.substring(open + IDS_OPEN.length(), detail.length() - 1).split(IDS_SEPARATOR));
    }

    /** The {@code id} fields of raw SSE events, in order. */
    static List<String> eventIds(byte[] events) {
        List<String> ids = new ArrayList<>(1);
        for (String line : new String(events, StandardCharsets.UTF_8).split("\r\n|\r|\n")) {
            if (line.startsWith("id:")) {
                String id = line.substring(3);
                ids.add(id.startsWith(" ") ? id.substring(1) : id);
            }
        }
        return ids;
    }

    @Override
    public String toString() {
        return "priming_drop";
    }
}
