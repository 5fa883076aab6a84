package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;

/**
 * {@code resume_repeat} (HTTP only): on an SSE stream the client resumed (a GET with
 * {@code Last-Event-ID}), the message is redelivered twice, the copy with the same event id: a
 * replay that repeats an event, which a client must not act on twice (basic#responses: one
 * answer per request). A message on a stream that was not resumed is left alone (nothing to do).
 * Unlike {@code duplicate}, it waits for a resumption.
 */
public final class ResumeRepeatFault extends DeclaredFault {

    /** {@code resume_repeat}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("resume_repeat", ResumeRepeatFault::create)
            .only(TransportKind.HTTP);

    /** {@code resume_repeat} takes no parameters. */
    public record Config() {
        static Config from(FaultParams params) {
            return new Config();
        }
    }

    /** A fault of this type (it takes no parameters). */
    public ResumeRepeatFault() {
        super(TYPE);
    }

    static ResumeRepeatFault create(FaultParams params) {
        Config.from(params);
        return new ResumeRepeatFault();
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        String after = SseStreams.resumedAfter(frame);
        if (after == null || ctx.connection().carriesOneMessage(frame)) {
            ctx.nothingToDo(frame, "it is not on a stream resumed with Last-Event-ID");
            return;
        }
        ctx.detail("repeated on the stream resumed after event " + after);
        ctx.output(Edits.copy(frame));
        ctx.proceed(frame);
    }

    @Override
    public String toString() {
        return "resume_repeat";
    }
}
