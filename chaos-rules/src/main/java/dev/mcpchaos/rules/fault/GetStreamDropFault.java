package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;

/**
 * {@code get_stream_drop} (HTTP only): at this message, which travels on a stream the client
 * opened with GET (the session's standalone stream, or a resumed one), the client's connection
 * is closed and the message goes nowhere: the GET stream is dropped without being ended, as a
 * network or an intermediary drops it. A client that wants the server's messages opens it again,
 * with {@code Last-Event-ID} to have what was lost redelivered (basic/transports, "Listening for
 * Messages from the Server", "Resumability and Redelivery"). A message on a POST's answer is left
 * alone (nothing to do); {@code disconnect} cuts those.
 */
public final class GetStreamDropFault extends DeclaredFault {

    /** {@code get_stream_drop}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("get_stream_drop", GetStreamDropFault::create)
            .only(TransportKind.HTTP)
            .effect(FaultType.Effect.ENDS_CONNECTION);

    /** {@code get_stream_drop} takes no parameters. */
    public record Config() {
        static Config from(FaultParams params) {
            return new Config();
        }
    }

    /** A fault of this type (it takes no parameters). */
    public GetStreamDropFault() {
        super(TYPE);
    }

    static GetStreamDropFault create(FaultParams params) {
        Config.from(params);
        return new GetStreamDropFault();
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        if (!SseStreams.onGetStream(frame)) {
            ctx.nothingToDo(frame, "it does not travel on a stream opened with GET");
            return;
        }
        // Said first: the connection the context hands out publishes the event before it closes.
        String resumed = SseStreams.resumedAfter(frame);
        ctx.detail("dropped the GET stream" + (resumed == null ? "" : " resumed after event " + resumed));
        ctx.connection().closeClientSide(frame);
        ctx.drop(frame);
    }

    @Override
    public String toString() {
        return "get_stream_drop";
    }
}
