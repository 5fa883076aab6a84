package dev.mcpchaos.core.transport;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The default transport's decision apart from the machine it runs on: io_uring, else epoll, else
 * NIO, and the note the proxy logs, which says why io_uring was passed over; a refusal named short.
 */
class IoTransportChoiceTest {

    @Test
    void theDefaultsChoiceSaysWhyIoUringWasPassedOver() {
        assertThat(IoTransport.choose(Optional.empty(), Optional.empty()))
                .isEqualTo(new IoTransport.Choice(IoTransport.IO_URING, "io_uring"));
        assertThat(IoTransport.choose(Optional.empty(), Optional.of("no epoll")))
                .isEqualTo(new IoTransport.Choice(IoTransport.IO_URING, "io_uring"));
        assertThat(IoTransport.choose(Optional.of("EPERM: a seccomp profile, or kernel.io_uring_disabled?"), Optional.empty()))
                .isEqualTo(new IoTransport.Choice(IoTransport.EPOLL, "epoll: io_uring refused here (EPERM: a seccomp "
                        + "profile, or kernel.io_uring_disabled?), using epoll"));
        assertThat(IoTransport.choose(Optional.of("ENOSYS: a kernel without it, or a sandbox?"), Optional.of("not Linux")))
                .isEqualTo(new IoTransport.Choice(IoTransport.NIO, "nio: io_uring refused here (ENOSYS: a kernel "
                        + "without it, or a sandbox?), epoll too (not Linux), using nio"));
    }

    @Test
    void aRefusalIsNamedShortByItsErrno() {
        // What Netty 4.2 throws where seccomp answers io_uring_setup with EPERM (Docker 25's
        // default profile) or ENOSYS, and when native transports are switched off.
        assertThat(IoTransport.reason(new RuntimeException("failed to create io_uring ring fd: Operation not permitted")))
                .isEqualTo("EPERM: a seccomp profile, or kernel.io_uring_disabled?");
        assertThat(IoTransport.reason(new RuntimeException("failed to create io_uring ring fd: Function not implemented")))
                .isEqualTo("ENOSYS: a kernel without it, or a sandbox?");
        assertThat(IoTransport.reason(new UnsupportedOperationException(
                "Native transport was explicit disabled with -Dio.netty.transport.noNative=true")))
                .isEqualTo("Native transport was explicit disabled with -Dio.netty.transport.noNative=true");
        assertThat(IoTransport.reason(new IllegalStateException(new UnsatisfiedLinkError("no netty_transport_native_io_uring42"))))
                .isEqualTo("java.lang.UnsatisfiedLinkError: no netty_transport_native_io_uring42");
        assertThat(IoTransport.reason(new ExceptionInInitializerError())).isEqualTo("ExceptionInInitializerError");
        assertThat(IoTransport.reason(null)).isEqualTo("unknown");
    }
}
