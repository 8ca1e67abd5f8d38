package io.stellflow.protocol.message;

import static io.stellflow.protocol.WireReader.ensureFullyRead;
import static io.stellflow.protocol.WireReader.readNullableString;
import static io.stellflow.protocol.WireReader.readStringArray;
import static io.stellflow.protocol.WireWriter.writeNullableString;
import static io.stellflow.protocol.WireWriter.writeStringArray;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * ApiVersions request v0 (apiKey 0, {@code docs/spec/wire-protocol.md} §6.1). All fields are
 * informational.
 *
 * <p>Immutable, thread-safe. {@link #read} throws ProtocolException INVALID_REQUEST on any strict
 * decoding violation (spec §2).
 */
public record ApiVersionsRequest(
        String clientSoftwareName, String clientSoftwareVersion, List<String> supportedFeatures) implements ApiMessage {

    public ApiVersionsRequest {
        supportedFeatures = List.copyOf(supportedFeatures);
    }

    @Override
    public void write(ByteBuf out) {
        writeNullableString(out, clientSoftwareName);
        writeNullableString(out, clientSoftwareVersion);
        writeStringArray(out, supportedFeatures, "supportedFeatures");
    }

    public static ApiVersionsRequest read(ByteBuf body) {
        String name = readNullableString(body, "clientSoftwareName");
        String version = readNullableString(body, "clientSoftwareVersion");
        List<String> features = readStringArray(body, "supportedFeatures");
        ensureFullyRead(body, "ApiVersionsRequest");
        return new ApiVersionsRequest(name, version, features);
    }
}
