package io.stellflow.controller.image;

import io.stellflow.controller.proto.MetadataDeltaProto;
import io.stellflow.controller.proto.MetadataRecord;
import java.util.List;

/**
 * The records of one committed Raft entry, at metadata offset {@code offset} (the Raft index).
 * An entry whose command was rejected by the applier is delivered with no records, so a follower
 * sees every offset.
 *
 * @param term Raft term of the entry
 * @param offset Raft index of the entry (the metadata offset)
 * @param records the records, applied atomically in this order
 */
public record MetadataDelta(long term, long offset, List<MetadataRecord> records) {
    public MetadataDelta {
        records = List.copyOf(records);
    }

    public static MetadataDelta fromProto(MetadataDeltaProto p) {
        return new MetadataDelta(p.getTerm(), p.getIndex(), p.getRecordsList());
    }

    public MetadataDeltaProto toProto() {
        return MetadataDeltaProto.newBuilder()
                .setTerm(term)
                .setIndex(offset)
                .addAllRecords(records)
                .build();
    }
}
