/**
 * The magic-1 RecordBatch format ({@code docs/spec/wire-protocol.md} §7): layout, CRC-32C,
 * producer-side validation, a client-side builder and a consumer-side reader. A RecordBatchSet is
 * one or more complete batches back to back.
 */
package io.stellflow.protocol.record;
