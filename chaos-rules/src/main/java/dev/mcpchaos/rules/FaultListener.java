package dev.mcpchaos.rules;

/**
 * Told about every fault the engine injects, for event logs, metrics and tests. Called on the
 * chain's executor, in the order the faults are injected: do not block, and do not throw (an
 * exception is logged and ignored).
 */
@FunctionalInterface
public interface FaultListener {

    void onFault(FaultEvent event);
}
