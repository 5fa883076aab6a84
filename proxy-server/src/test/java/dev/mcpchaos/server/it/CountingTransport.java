package dev.mcpchaos.server.it;

import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import reactor.core.publisher.Mono;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * An SDK client transport that keeps every message its client sent and received, in order, and
 * otherwise is the transport it wraps: the client's own account of a conversation, to hold a
 * recording against.
 */
final class CountingTransport implements McpClientTransport {

    final List<McpSchema.JSONRPCMessage> sent = new CopyOnWriteArrayList<>();
    final List<McpSchema.JSONRPCMessage> received = new CopyOnWriteArrayList<>();
    private final McpClientTransport delegate;

    CountingTransport(McpClientTransport delegate) {
        this.delegate = delegate;
    }

    @Override
    public Mono<Void> connect(Function<Mono<McpSchema.JSONRPCMessage>, Mono<McpSchema.JSONRPCMessage>> handler) {
        return delegate.connect(in -> handler.apply(in.doOnNext(received::add)));
    }

    @Override
    public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
        return Mono.defer(() -> {
            sent.add(message);
            return delegate.sendMessage(message);
        });
    }

    @Override
    public void setExceptionHandler(Consumer<Throwable> handler) {
        delegate.setExceptionHandler(handler);
    }

    @Override
    public Mono<Void> closeGracefully() {
        return delegate.closeGracefully();
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
        return delegate.unmarshalFrom(data, typeRef);
    }

    @Override
    public List<String> protocolVersions() {
        return delegate.protocolVersions();
    }

    /** {@code request tools/call 3}, {@code notification notifications/progress}, {@code response 3}, {@code error 3}. */
    static String key(McpSchema.JSONRPCMessage message) {
        if (message instanceof McpSchema.JSONRPCRequest r) {
            return "request " + r.method() + " " + r.id();
        }
        if (message instanceof McpSchema.JSONRPCNotification n) {
            return "notification " + n.method();
        }
        McpSchema.JSONRPCResponse r = (McpSchema.JSONRPCResponse) message;
        return (r.error() != null ? "error " : "response ") + r.id();
    }

    /** Whether every request either side sent has had its answer. */
    boolean nothingInFlight() {
        return answered(sent, received) && answered(received, sent);
    }

    private static boolean answered(List<McpSchema.JSONRPCMessage> requests, List<McpSchema.JSONRPCMessage> answers) {
        for (McpSchema.JSONRPCMessage message : requests) {
            if (message instanceof McpSchema.JSONRPCRequest r && answers.stream().noneMatch(
                    a -> a instanceof McpSchema.JSONRPCResponse response && String.valueOf(response.id())
                            .equals(String.valueOf(r.id())))) {
                return false;
            }
        }
        return true;
    }
}
