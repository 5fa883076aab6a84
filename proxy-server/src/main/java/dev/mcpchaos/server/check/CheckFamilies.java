package dev.mcpchaos.server.check;

import java.util.List;

/**
 * The registry of the referee's {@link CheckFamily}s. A class of its own, not a constant of the
 * interface: an interface with default methods is initialized with each class that implements
 * it, so a list of the implementations in the interface deadlocked two referees whose threads
 * initialized the interface and a family at once.
 */
final class CheckFamilies {

    /** Every family, in the order their hooks run for a message. */
    static final List<CheckFamily> ALL = List.of(new StdioChecks(), new JsonRpcChecks(), new LifecycleChecks(),
            new ToolChecks(), new HttpHeaderChecks(), new ClientChecks());

    private CheckFamilies() {
    }
}
