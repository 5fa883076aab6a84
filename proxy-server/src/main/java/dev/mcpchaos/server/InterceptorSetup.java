package dev.mcpchaos.server;

import dev.mcpchaos.core.intercept.FrameInterceptor;
import dev.mcpchaos.core.transport.TransportKind;
import dev.mcpchaos.rules.FaultListener;
import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.rules.RuleFileException;
import dev.mcpchaos.rules.RuleSet;
import dev.mcpchaos.server.traffic.TrafficLog;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What both proxy builders put in front of the transport: the traffic log, the rule engine and
 * the user's own interceptors, in that order (the log then shows messages as they arrived).
 */
final class InterceptorSetup {

    private final List<FrameInterceptor> extra = new ArrayList<>();
    private final List<FaultListener> faultListeners = new ArrayList<>();
    private int trafficChars = -1;
    private RuleSet rules;
    private Long seed;

    void logTraffic(int maxChars) {
        this.trafficChars = maxChars;
    }

    void interceptor(FrameInterceptor interceptor) {
        extra.add(Objects.requireNonNull(interceptor, "interceptor"));
    }

    void rules(RuleSet rules) {
        this.rules = Objects.requireNonNull(rules, "rules");
    }

    void seed(long seed) {
        this.seed = seed;
    }

    void faultListener(FaultListener listener) {
        faultListeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /**
     * The interceptors, in order, for a proxy on {@code transport}.
     *
     * @throws RuleFileException when a rule cannot work on that transport
     */
    List<FrameInterceptor> build(TransportKind transport) {
        RuleEngine engine = null;
        if (rules != null) {
            RuleEngine.Builder chaos = RuleEngine.builder(rules).transport(transport);
            if (seed != null) {
                chaos.seed(seed);
            }
            faultListeners.forEach(chaos::listener);
            engine = chaos.build(); // logs the seed it uses
        }
        List<FrameInterceptor> all = new ArrayList<>();
        if (trafficChars >= 0) {
            all.add(new TrafficLog(trafficChars));
        }
        if (engine != null) {
            all.add(engine);
        }
        all.addAll(extra);
        return all;
    }
}
