package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.core.transport.TransportKind;

/**
 * One kind of breakage applied to one message, such as {@code latency} or {@code corrupt}.
 *
 * <h2>Contract for fault authors</h2>
 * An instance is made once per rule from its validated configuration and is shared by every
 * message and session the rule matches, so it holds no per-message state (per-session state goes
 * through {@link FaultContext#sessionState}). For each frame it receives, {@link #apply} must
 * do exactly one of, now or later (through {@link FaultContext#schedule}):
 * <ul>
 *   <li>{@link FaultContext#proceed proceed} with the frame or a replacement (the rules after
 *       this one then see it, and it leaves in its place in the direction's order);</li>
 *   <li>{@link FaultContext#drop drop} it (which releases it), possibly after acting on the
 *       connection;</li>
 *   <li>{@link FaultContext#end end} the message after having {@link FaultContext#output output}
 *       its bytes some other way (as pieces, for example), having released the frame;</li>
 *   <li>say there is {@link FaultContext#nothingToDo nothing to do} to this frame (a message
 *       already shorter than the cut): it passes untouched and is not an injection. A fault
 *       whose action would change nothing says so rather than claiming it acted.</li>
 * </ul>
 * It may also {@link FaultContext#output output} extra frames in the message's place (a stray
 * line, a duplicate) and {@link FaultContext#answer answer} the sender. Never block: delays go
 * through {@link FaultContext#schedule}. Every random choice comes from
 * {@link FaultContext#random()}. Release every buffer and frame that goes nowhere.
 *
 * <p>Adding a fault: one class that declares its {@link FaultType} ({@code public static final
 * FaultType TYPE}: its name, its parameters with their defaults, its transports, its factory) and
 * reads its parameters from the {@link FaultParams} it is given (extending {@link DeclaredFault},
 * which answers {@link #type} and {@link #supports} from it); one line in {@link FaultRegistry};
 * its tests and its section of {@code docs/rules.md} (a test checks the tables against the type).
 * See {@code docs/adding-a-fault.md}.
 */
public interface Fault {

    /** The name used as {@code fault.type} in rule files, such as {@code latency}: its {@link FaultType}'s name. */
    String type();

    /**
     * Whether this fault means anything on {@code transport} (its {@link FaultType#supports}). A rule whose fault does not is
     * refused when it is loaded; the message says {@code <type>: only applies to the <t> transport}.
     */
    default boolean supports(TransportKind transport) {
        return true;
    }

    /**
     * Whether this fault can act on this frame at all (an {@code error} needs a request or a
     * response, {@code tool_error} a {@code tools/call}). A frame it cannot act on does not count
     * as a match for {@code after}, {@code times} or {@code probability}. Called for every frame a
     * rule's match accepts, so it must only look at the envelope: no parsing, no allocation.
     */
    default boolean canApply(Frame frame) {
        return true;
    }

    /** Breaks one message; see the class comment for what must become of the frame. */
    void apply(FaultContext ctx, Frame frame);
}
