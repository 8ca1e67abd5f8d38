/**
 * Compression codecs for compressed record batches (decision 9.o of {@code
 * docs/spec/wire-protocol.md}; {@code docs/compression.md}): one {@link
 * io.stellflow.protocol.compression.CompressionCodec} per {@link
 * io.stellflow.protocol.compression.CompressionType}, each over a well-kept library (JDK zip, lz4-java,
 * zstd-jni, snappy-java) writing the container 9.o names, and a streaming {@link
 * io.stellflow.protocol.compression.Decompressor} with a hard cap on the decompressed size.
 *
 * <p>Foundation only: the broker's produce path and the producer do not use this package yet
 * (compressed batches are still refused with {@code FEATURE_NOT_ENABLED}).
 */
package io.stellflow.protocol.compression;
