package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;

/**
 * {@code resume_gap} (HTTP only): on an SSE stream the client resumed (a GET with
 * {@code Last-Event-ID}), the message is skipped: the replay has a gap, as from a server that
 * lost events it should have redelivered (basic/transports, "Resumability and Redelivery").
 * With {@code times: N} the first N matching events of resumed streams are skipped. A message on
 * a stream that was not resumed is left alone (nothing to do), so the rule waits for a resumption.
 */
public final class ResumeGapFault extends DeclaredFault {

    /** {@code resume_gap}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("resume_gap", ResumeGapFault::create)
            .only(TransportKind.HTTP);

    /** {@code resume_gap} takes no parameters. */
    public record Config() {
        static Config from(FaultParams params) {
            return new Config();
        }
    }

    /** A fault of this type (it takes no parameters). */
    public ResumeGapFault() {
        super(TYPE);
    }

    static ResumeGapFault create(FaultParams params) {
        Config.from(params);
        return new ResumeGapFault();
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        String after = SseStreams.resumedAfter(frame);
        if (after == null) {
            ctx.nothingToDo(frame, "it is not on a stream resumed with Last-Event-ID");
            return;
        }
        ctx.detail("skipped on the stream resumed after event " + after);
        ctx.drop(frame);
    }

    @Override
    public String toString() {
        return "resume_gap";
    }
}
