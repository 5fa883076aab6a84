package dev.mcpchaos.core.transport.http;

import dev.mcpchaos.core.frame.Frame;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.LastHttpContent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A body no interceptor reads (not JSON, not SSE, or JSON over its limit): relayed as it comes,
 * each piece flushed, its deadline moved by each piece. Nothing of it passes the chain.
 */
final class RawResponseBody implements ResponseBody {

    private static final Logger log = LoggerFactory.getLogger(RawResponseBody.class);

    private final ResponseOutput out;

    RawResponseBody(ResponseOutput out) {
        this.out = out;
    }

    @Override
    public ResponseBody onContent(HttpContent content) {
        if (content instanceof LastHttpContent) {
            out.endBody((LastHttpContent) content);
        } else {
            out.writeContent(content);
            out.flushSoon();
            out.bodyProgress(false);
        }
        return this;
    }

    @Override
    public void deliver(Frame frame) {
        log.warn("no way to send {} on a response relayed as is", frame);
        frame.release();
    }

    @Override
    public boolean carriesOneMessage() {
        return false;
    }

    @Override
    public void release() {
    }
}
