/**
 * Stellflow wire protocol v0 (request header v2): frame limits, request and response headers,
 * error codes, API keys and the strict primitive codecs ({@link io.stellflow.protocol.WireReader},
 * {@link io.stellflow.protocol.WireWriter}). Byte-exact contract: {@code docs/spec/wire-protocol.md}
 * (a copy of the team's {@code ../shared/spec/wire-protocol.md}, checked equal by {@code .ci/run}).
 *
 * <p>Message bodies live in {@code io.stellflow.protocol.message}, the magic-1 RecordBatch format
 * in {@code io.stellflow.protocol.record}. Every codec works on Netty {@code ByteBuf}s in
 * big-endian order and never retains or releases the buffers it is given.
 */
package io.stellflow.protocol;
