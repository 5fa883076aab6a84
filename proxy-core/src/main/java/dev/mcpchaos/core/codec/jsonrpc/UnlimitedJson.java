package dev.mcpchaos.core.codec.jsonrpc;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;

/**
 * The one jackson-core factory for reading messages the proxy carries: no limit on string
 * length, number length, nesting, name length or document length. The framer in front bounds a
 * message's size, and a limit here would turn a long string or deep nesting into a parse error
 * that hides the very messages a chaos run is about. Shared by the envelope sniffer, the
 * arguments digest and the faults that rewrite a message (chaos-rules). A factory is thread-safe.
 */
public final class UnlimitedJson {

    /** Streaming parsers and generators without size limits. */
    public static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxStringLength(Integer.MAX_VALUE)
                    .maxNumberLength(Integer.MAX_VALUE)
                    .maxNestingDepth(Integer.MAX_VALUE)
                    .maxNameLength(Integer.MAX_VALUE)
                    .maxDocumentLength(-1)
                    .build())
            .build();

    private UnlimitedJson() {
    }
}
