package io.stellflow.protocol.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/** Assertions on {@link ProtocolException} error codes. */
public final class ProtocolAssertions {
    private ProtocolAssertions() {}

    /** Asserts that {@code call} throws a ProtocolException carrying {@code code}. */
    public static void assertProtocolError(ThrowingCallable call, short code) {
        assertThatThrownBy(call)
                .isInstanceOfSatisfying(
                        ProtocolException.class,
                        e -> assertThat(e.errorCode())
                                .as("%s: %s", Errors.name(e.errorCode()), e.getMessage())
                                .isEqualTo(code));
    }
}
