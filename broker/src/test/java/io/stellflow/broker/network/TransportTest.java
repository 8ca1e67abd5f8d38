package io.stellflow.broker.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.stellflow.testsupport.IntegrationTest;
import org.junit.jupiter.api.Test;

@IntegrationTest
class TransportTest {

    @Test
    void autoPrefersEpollThenIoUringThenNio() {
        Transport t = Transport.select(TransportType.AUTO);
        TransportType expected = Transport.isAvailable(TransportType.EPOLL)
                ? TransportType.EPOLL
                : Transport.isAvailable(TransportType.IO_URING) ? TransportType.IO_URING : TransportType.NIO;
        assertThat(t.type()).isEqualTo(expected);
        assertThat(t.type()).isNotEqualTo(TransportType.AUTO);
    }

    @Test
    void eachConcreteTransportSelectsItsOwnServerChannel() {
        assertThat(Transport.select(TransportType.NIO).serverChannelClass()).isEqualTo(NioServerSocketChannel.class);
        if (Transport.isAvailable(TransportType.EPOLL)) {
            assertThat(Transport.select(TransportType.EPOLL).serverChannelClass())
                    .isEqualTo(EpollServerSocketChannel.class);
        }
        if (Transport.isAvailable(TransportType.IO_URING)) {
            assertThat(Transport.select(TransportType.IO_URING).serverChannelClass())
                    .isEqualTo(IoUringServerSocketChannel.class);
        }
    }
}
