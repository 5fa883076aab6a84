package dev.mcpchaos.server;

import dev.mcpchaos.rules.RuleEngine;
import dev.mcpchaos.rules.journal.Journal;

import java.net.InetSocketAddress;

/**
 * What a running proxy is on either transport: its transport and its {@link ChaosRuntime},
 * closed in that order (the transport first, so that nothing reaches a service that is gone).
 * The transports' handles ({@link McpChaosProxy.Running}, {@link HttpProxyBuilder.RunningHttp})
 * add only what their transport has.
 */
abstract class RunningBase implements RunningProxy {

    final ChaosRuntime runtime;
    private final Runnable closeTransport;

    /**
     * @param closeTransport stops the transport (and whatever is bound to it, such as a check of
     *                       the upstream); the runtime is closed after it, even when it fails
     */
    RunningBase(ChaosRuntime runtime, Runnable closeTransport) {
        this.runtime = runtime;
        this.closeTransport = closeTransport;
    }

    @Override
    public RuleEngine rules() {
        return runtime.engine();
    }

    @Override
    public Journal journal() {
        Journal journal = runtime.journal();
        return journal != null ? journal : RunningProxy.super.journal();
    }

    @Override
    public InetSocketAddress controlAddress() {
        return runtime.controlAddress();
    }

    /** Where the operations listener listens, or null when there is none. */
    public InetSocketAddress operationsAddress() {
        return runtime.operationsAddress();
    }

    @Override
    public void close() {
        try {
            closeTransport.run();
        } finally {
            runtime.close();
        }
    }
}
