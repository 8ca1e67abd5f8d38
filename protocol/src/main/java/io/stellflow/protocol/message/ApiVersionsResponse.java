package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readArray;
import static io.stellflow.protocol.WireReader.readInt16;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireReader.readStringArray;
import static io.stellflow.protocol.WireWriter.writeArray;
import static io.stellflow.protocol.WireWriter.writeNullableString;
import static io.stellflow.protocol.WireWriter.writeStringArray;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * ApiVersions response v0 ({@code docs/spec/wire-protocol.md} §6.1): one version range per
 * implemented API, broker software name and version, advertised features (non-null elements).
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation.
 */
public record ApiVersionsResponse(
        List<ApiVersionRange> apiVersions,
        String brokerSoftwareName,
        String brokerSoftwareVersion,
        List<String> supportedFeatures)
        implements ApiMessage {

    public ApiVersionsResponse {
        apiVersions = List.copyOf(apiVersions);
        supportedFeatures = List.copyOf(supportedFeatures);
    }

    /** Supported versions [minVersion, maxVersion] of one API. */
    public record ApiVersionRange(short apiKey, short minVersion, short maxVersion) {}

    @Override
    public void write(ByteBuf out) {
        writeArray(out, apiVersions, (b, r) -> {
            b.writeShort(r.apiKey());
            b.writeShort(r.minVersion());
            b.writeShort(r.maxVersion());
        });
        writeNullableString(out, brokerSoftwareName);
        writeNullableString(out, brokerSoftwareVersion);
        writeStringArray(out, supportedFeatures, "supportedFeatures");
    }

    public static ApiVersionsResponse read(ByteBuf body) {
        List<ApiVersionRange> ranges = readArray(
                body,
                "apiVersions",
                b -> new ApiVersionRange(
                        readInt16(b, "apiKey"), readInt16(b, "minVersion"), readInt16(b, "maxVersion")));
        String name = readNullableString(body, "brokerSoftwareName");
        String version = readNullableString(body, "brokerSoftwareVersion");
        List<String> features = readStringArray(body, "supportedFeatures");
        ensureFullyRead(body, "ApiVersionsResponse");
        return new ApiVersionsResponse(ranges, name, version, features);
    }
}
