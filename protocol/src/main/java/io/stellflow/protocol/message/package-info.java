/**
 * v0 API bodies ({@code docs/spec/wire-protocol.md} §6.1-6.5 and §6.14), one record per spec table,
 * field names as in the spec. Decoding is strict (spec §2) and request-level range checks of
 * §6.3-§6.5 run inside {@code read}.
 */
package io.stellflow.protocol.message;
