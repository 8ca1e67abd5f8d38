package io.stellflow.protocol.fuzz;

import io.stellflow.protocol.Errors;
import io.stellflow.protocol.ProtocolException;

/** Small assertion helpers of the fuzz targets: a failed check is a finding. Stateless. */
public final class Oracle {
    private Oracle() {}

    /** Fails with {@code what} unless {@code ok}. */
    public static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    /** Fails unless {@code e} carries one of {@code allowed} (the codec's documented decode errors). */
    public static void expectCode(ProtocolException e, short... allowed) {
        for (short code : allowed) {
            if (e.errorCode() == code) {
                return;
            }
        }
        throw new AssertionError("undocumented error code " + Errors.name(e.errorCode()) + ": " + e.getMessage(), e);
    }

    /** A call that must fail with a {@link ProtocolException} carrying {@code code}. */
    public static void expectError(Runnable call, short code, String what) {
        try {
            call.run();
        } catch (ProtocolException e) {
            expectCode(e, code);
            return;
        }
        throw new AssertionError(what + ": no ProtocolException " + Errors.name(code));
    }
}
