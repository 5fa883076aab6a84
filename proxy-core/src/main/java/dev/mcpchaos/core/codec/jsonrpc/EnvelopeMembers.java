package dev.mcpchaos.core.codec.jsonrpc;

import dev.mcpchaos.core.frame.Envelope;

/**
 * The members of a JSON-RPC object that make its {@link Envelope}, as a scanner meets them: the
 * one account both scanners keep ({@link EnvelopeSniffer}'s parser path and
 * {@link FastEnvelopeScanner}), so they cannot capture different things. One per scanner, reused
 * for every object (the root, or each element of a batch); plain fields, written in place.
 */
final class EnvelopeMembers {

    String jsonrpc;
    boolean hasId;
    Object id;
    String method;
    String paramsName;
    boolean hasResult;
    boolean hasError;

    /** Forgets the object: for the next one, and so that no text of the last one is kept. */
    void clear() {
        jsonrpc = null;
        hasId = false;
        id = null;
        method = null;
        paramsName = null;
        hasResult = false;
        hasError = false;
    }

    /** The envelope of the object as captured so far. */
    Envelope envelope() {
        return Envelope.ofObject(jsonrpc, hasId, id, method, paramsName, hasResult, hasError);
    }
}
