package io.stellflow.controller.image;

import io.stellflow.controller.proto.ErrorCode;

/**
 * Outcome of applying one command: the new image (on rejection the old content at the new offset)
 * and why it was rejected.
 *
 * @param image image after the entry (always at the entry's term and offset)
 * @param error {@link ErrorCode#NONE} when every record applied
 * @param message empty on success, otherwise the reason naming the bad record
 */
public record ApplyResult(MetadataImage image, ErrorCode error, String message) {
    public boolean ok() {
        return error == ErrorCode.NONE;
    }
}
