package io.stellflow.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.protocol.message.DescribeControllersResponse.ControllerEndpoint;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link DescribeControllersHandler}: the broker's controller endpoints as the response lists them. */
class DescribeControllersHandlerTest {

    @Test
    void endpointsAreSplitIntoHostAndPortWithIpv6BracketsRemoved() {
        assertThat(DescribeControllersHandler.parse("127.0.0.1:9094"))
                .isEqualTo(new ControllerEndpoint("127.0.0.1", 9094));
        assertThat(DescribeControllersHandler.parse("[::1]:9094")).isEqualTo(new ControllerEndpoint("::1", 9094));
        assertThat(DescribeControllersHandler.parse("ctl1.example:19094"))
                .isEqualTo(new ControllerEndpoint("ctl1.example", 19094));
        new DescribeControllersHandler(List.of("a:1", "b:2")); // the broker's list is accepted as given
    }

    @Test
    void anEntryThatIsNotHostPortIsRefusedNamingIt() {
        for (String bad : List.of("nohost", ":9094", "host:")) {
            assertThatThrownBy(() -> DescribeControllersHandler.parse(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + bad + "'");
        }
    }
}
