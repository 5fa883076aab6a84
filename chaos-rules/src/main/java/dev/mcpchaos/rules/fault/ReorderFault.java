package dev.mcpchaos.rules.fault;

import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.core.frame.Envelope;
import dev.mcpchaos.core.frame.Frame;
import dev.mcpchaos.rules.internal.Text;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * {@code reorder}: matched messages leave out of order. Messages the rule does not match are not
 * held back by the ones it holds.
 *
 * <ul>
 *   <li>With {@code window: N}, matched messages (per session and direction) are collected until
 *       N are held, then released all at once in a shuffled order that is never the original
 *       one. A window that does not fill is released, shuffled, {@code hold} after its first
 *       message (default 1s), so a conversation that waits for an answer never stalls.</li>
 *   <li>With {@code hold} alone, each matched message is held for a random time up to
 *       {@code hold}, so later messages overtake it.</li>
 * </ul>
 */
public final class ReorderFault extends DeclaredFault {

    static final int MAX_WINDOW = 1000;
    /** How long an unfilled window waits when only {@code window} is given. */
    static final Duration DEFAULT_WINDOW_HOLD = Duration.ofSeconds(1);

    /** {@code reorder}: its name in rule files, its parameters, its transports; listed in {@link FaultRegistry}. */
    public static final FaultType TYPE = FaultType.of("reorder", ReorderFault::create,
            FaultParameter.optional("window", ""),
            FaultParameter.optional("hold", Text.duration(DEFAULT_WINDOW_HOLD) + " with a window"))
            .effect(FaultType.Effect.HOLDS);

    /**
     * @param window how many matched messages to shuffle together, 2 to 1000; 0 when not given
     * @param hold with a window, the longest a message waits for it to fill; without, the most a
     *             message is held; > 0
     */
    public record Config(int window, Duration hold) {
        public Config {
            Objects.requireNonNull(hold, "hold");
            InvalidParameterException.check(window == 0 || window >= 2 && window <= MAX_WINDOW, "window", window,
                    "a whole number from 2 to " + MAX_WINDOW);
            InvalidParameterException.check(!hold.isNegative() && !hold.isZero(), "hold",
                    Text.quote(Text.duration(hold)), "a duration > 0, such as 500ms");
        }

        /** Reads {@code window} and/or {@code hold}; at least one is required. */
        static Config from(FaultParams params) {
            boolean hasWindow = params.has("window");
            boolean hasHold = params.has("hold");
            if (!hasWindow && !hasHold) {
                throw new InvalidParameterException("window", "missing",
                        "window (a number of messages) or hold (a duration), or both");
            }
            int window = hasWindow ? params.integer("window", null, 2, MAX_WINDOW).intValue() : 0;
            Duration hold = params.duration("hold", DEFAULT_WINDOW_HOLD);
            return new Config(window, hold);
        }
    }

    private final Config config;

    /** A fault with this configuration (validated by the record). */
    public ReorderFault(Config config) {
        super(TYPE);
        this.config = Objects.requireNonNull(config, "config");
    }

    static ReorderFault create(FaultParams params) {
        return new ReorderFault(Config.from(params));
    }

    @Override
    public void apply(FaultContext ctx, Frame frame) {
        ctx.detach();
        if (config.window == 0) {
            Duration delay = Duration.ofMillis(1 + (long) (ctx.random().nextDouble() * config.hold.toMillis()));
            ctx.detail("held " + Text.duration(delay) + "; later messages may overtake it");
            ctx.schedule(delay, () -> ctx.proceed(frame));
            return;
        }
        Windows windows = ctx.sessionState(Windows::new);
        Window window = windows.of(frame.direction());
        window.held.add(new Held(ctx, frame));
        if (window.held.size() >= config.window) {
            List<Held> arrived = List.copyOf(window.held);
            List<Held> released = window.take(ctx.random());
            ctx.detail("window of " + config.window + " full; released " + names(released, arrived));
            // This message's fault releases the others, through their own contexts: its event
            // (which says so) must be out before the first of them reaches the peer.
            ctx.announce();
            handOn(released);
            return;
        }
        ctx.detail("held in a window (" + window.held.size() + " of " + config.window + ")");
        if (window.held.size() == 1) {
            long generation = window.generation;
            ctx.schedule(config.hold, () -> {
                if (window.generation == generation && !window.held.isEmpty()) {
                    handOn(window.take(ctx.random()));
                }
            });
        }
    }

    /** A message waiting in a window, with the context that hands it on. */
    private record Held(FaultContext ctx, Frame frame) {
    }

    /** One session's windows, one per direction. */
    private static final class Windows {
        private final Window toServer = new Window();
        private final Window toClient = new Window();

        Window of(Direction direction) {
            return direction == Direction.CLIENT_TO_SERVER ? toServer : toClient;
        }
    }

    /** The messages held in one direction, and a count of releases so a stale timer does nothing. */
    private static final class Window {
        private final List<Held> held = new ArrayList<>();
        private long generation;

        /** Empties the window, returning its messages in a shuffled order. */
        List<Held> take(SplittableRandom random) {
            generation++;
            int[] order = shuffledOrder(held.size(), random);
            List<Held> shuffled = new ArrayList<>(order.length);
            for (int index : order) {
                shuffled.add(held.get(index));
            }
            held.clear();
            return shuffled;
        }
    }

    private static void handOn(List<Held> released) {
        for (Held h : released) {
            h.ctx.proceed(h.frame);
        }
    }

    /**
     * The released messages in release order, by what a reader of the traffic can find them by:
     * {@code ids 5, 4, 3} when all have ids; otherwise each by its id ({@code id 5}) or, for a
     * notification, its method. When names repeat (three progress notifications), their places
     * in the order they were held follow: {@code (held 2nd, 3rd, 1st)}.
     */
    private static String names(List<Held> released, List<Held> arrived) {
        boolean allIds = true;
        for (Held h : released) {
            allIds &= h.frame.envelope().hasId();
        }
        List<String> names = new ArrayList<>(released.size());
        for (Held h : released) {
            Envelope envelope = h.frame.envelope();
            String name = envelope.hasId() ? (allIds ? "" : "id ") + Text.id(envelope.id())
                    : h.frame.method() != null ? h.frame.method() : envelope.kind().name().toLowerCase(Locale.ROOT);
            names.add(name);
        }
        StringBuilder sb = new StringBuilder(allIds ? "ids " : "").append(String.join(", ", names));
        if (new HashSet<>(names).size() < names.size()) {
            sb.append(" (held ");
            for (int i = 0; i < released.size(); i++) {
                sb.append(i == 0 ? "" : ", ").append(ordinal(arrived.indexOf(released.get(i)) + 1));
            }
            sb.append(')');
        }
        return sb.toString();
    }

    private static String ordinal(int n) {
        int mod100 = n % 100;
        String suffix = mod100 >= 11 && mod100 <= 13 ? "th"
                : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
        return n + suffix;
    }

    /** A random permutation of {@code 0..n-1} that, for n >= 2, is never the identity. */
    static int[] shuffledOrder(int n, SplittableRandom random) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        boolean identity = n >= 2;
        for (int i = 0; i < n && identity; i++) {
            identity = order[i] == i;
        }
        if (identity) {
            // Rotating by one is still drawn from the seed's stream, and is out of order.
            int first = order[0];
            System.arraycopy(order, 1, order, 0, n - 1);
            order[n - 1] = first;
        }
        return order;
    }

    @Override
    public String toString() {
        return "reorder(" + (config.window > 0 ? "window " + config.window + ", " : "") + "hold "
                + Text.duration(config.hold) + ')';
    }
}
