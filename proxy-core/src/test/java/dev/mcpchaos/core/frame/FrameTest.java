package dev.mcpchaos.core.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link Frame}'s ownership of its bytes: owned frames, lent frames, and a lent frame made owned. */
class FrameTest {

    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;
    private static final Envelope NOTIFICATION = Envelope.ofObject("2.0", false, null, "notifications/message", null,
            false, false);

    @Test
    void anOriginalFrameWithContentFurtherInReleasesItsWireBytesOnce() {
        ByteBuf wire = buffer("data: {}\n\n");
        Frame frame = Frame.original(wire, 6, 2, NOTIFICATION, Direction.SERVER_TO_CLIENT, 3);
        assertThat(text(frame.content())).isEqualTo("{}");
        assertThat(frame.contentLength()).isEqualTo(2);
        Frame copy = frame.duplicate();
        assertThat(text(copy.content())).isEqualTo("{}");
        assertThat(wire.refCnt()).isEqualTo(2);
        frame.release();
        copy.release();
        assertThat(wire.refCnt()).isZero();
    }

    @Test
    void aLentFrameReleasesNoneOfItsLendersBytes() {
        ByteBuf wire = buffer("data: {}\n\n");
        try {
            Frame frame = Frame.lent(wire, 6, 2, NOTIFICATION, Direction.SERVER_TO_CLIENT, 0);
            assertThat(frame.isLent()).isTrue();
            assertThat(frame.isOriginal()).isTrue();
            assertThat(text(frame.content())).isEqualTo("{}");
            assertThat(frame.release()).isTrue();
            assertThat(wire.refCnt()).isEqualTo(1);
        } finally {
            wire.release();
        }
    }

    @Test
    void aLentFrameMadeOwnedOutlivesItsLenderAndKeepsEverything() {
        ByteBuf wire = buffer("data: {\"id\":1,\"result\":{}}\n\n");
        Frame lent = Frame.lent(wire, 6, 20, NOTIFICATION, Direction.SERVER_TO_CLIENT, 9);
        Envelope request = Envelope.ofObject("2.0", true, 1L, "tools/list", null, false, false);
        lent.answers(request, 1234);
        lent.route("exchange");
        Frame owned = lent.toOwned();
        wire.release(); // the lender is done: the owned frame holds the bytes now
        assertThat(owned.isLent()).isFalse();
        assertThat(owned.isOriginal()).isTrue();
        assertThat(text(owned.wire())).isEqualTo("data: {\"id\":1,\"result\":{}}\n\n");
        assertThat(text(owned.content())).isEqualTo("{\"id\":1,\"result\":{}}");
        assertThat(owned.sequence()).isEqualTo(9);
        assertThat(owned.direction()).isEqualTo(Direction.SERVER_TO_CLIENT);
        assertThat(owned.envelope()).isSameAs(NOTIFICATION);
        assertThat(owned.answers()).isSameAs(request);
        assertThat(owned.answeredRequestArrivalNanos()).isEqualTo(1234);
        assertThat(owned.route()).isEqualTo("exchange");
        assertThat(wire.refCnt()).isEqualTo(1);
        owned.release();
        assertThat(wire.refCnt()).isZero();
    }

    @Test
    void aLentFrameWithJoinedContentMadeOwnedHoldsBothBuffers() {
        ByteBuf wire = buffer("data: {\"a\":\ndata: 1}\n\n");
        ByteBuf joined = buffer("{\"a\":\n1}");
        Frame lent = Frame.lent(wire, joined, NOTIFICATION, Direction.SERVER_TO_CLIENT, 0);
        assertThat(text(lent.content())).isEqualTo("{\"a\":\n1}");
        Frame owned = lent.duplicate(); // a duplicate of a lent frame is owned too
        wire.release();
        joined.release();
        assertThat(owned.isLent()).isFalse();
        assertThat(text(owned.content())).isEqualTo("{\"a\":\n1}");
        assertThat(text(owned.wire())).isEqualTo("data: {\"a\":\ndata: 1}\n\n");
        owned.release();
        assertThat(wire.refCnt()).isZero();
        assertThat(joined.refCnt()).isZero();
    }

    @Test
    void anOwnedFrameMadeOwnedIsItselfRetained() {
        ByteBuf wire = buffer("{}\n");
        Frame frame = Frame.original(wire, 2, NOTIFICATION, Direction.CLIENT_TO_SERVER, 0);
        assertThat(frame.toOwned()).isSameAs(frame);
        assertThat(frame.refCnt()).isEqualTo(2);
        frame.release(2);
        assertThat(wire.refCnt()).isZero();
    }

    @Test
    void contentOutsideTheWireBytesIsRejected() {
        ByteBuf wire = buffer("data: {}\n\n");
        try {
            assertThatThrownBy(() -> Frame.lent(wire, 6, 5, NOTIFICATION, Direction.SERVER_TO_CLIENT, 0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("6+5");
            assertThatThrownBy(() -> Frame.original(wire, -1, 2, NOTIFICATION, Direction.SERVER_TO_CLIENT, 0))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(wire.refCnt()).isEqualTo(1);
        } finally {
            wire.release();
        }
    }

    private static ByteBuf buffer(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        return ALLOC.buffer(bytes.length).writeBytes(bytes);
    }

    private static String text(ByteBuf buf) {
        return buf.toString(StandardCharsets.UTF_8);
    }
}
