package io.stellflow.protocol;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * The frame of one request whose large bytes values (Produce record batches, 256 KiB to 4 MiB) are
 * not copied into it: {@link WireWriter#writeNullableBytes(ByteBuf, ByteBuf)} appends a value of at
 * least {@link #MIN_APPEND_BYTES} as a retained slice ({@link #appendRetainedSlice}), and every other
 * field is written into small pooled direct components between them. Written to a socket, the frame
 * goes out in one gathering write ({@code writev}) of its components, byte for byte what a contiguous
 * buffer would have sent; only readerIndex..writerIndex is ever sent, never unwritten room.
 *
 * <pre>
 *  | length, header, acks, ... partition | batch 1 (retained slice) | partition, length | batch 2 | room |
 *  |<------------- room component ------>|<---- no copy ----------->|<-- room ------->|         |      |
 * </pre>
 *
 * <p>Growth: writes that do not fit the room left add one component of exactly the missing bytes plus
 * {@link #ROOM_BYTES} (not Netty's doubling of the whole buffer, which after a 1 MiB batch would
 * reserve another MiB for a few bytes). Never consolidated (no copy of the components).
 *
 * <p>Ownership: the frame owns its components; releasing it releases them, and with them the
 * retains on the appended values. A caller that appends a value must not change those bytes until
 * the frame is released (record batches are immutable once closed). Not thread-safe: built by one
 * thread, then handed to the channel (whose event loop writes and releases it). Not for reading back
 * with absolute offsets at high rates (each access looks the component up).
 */
public final class GatheringBuffer extends CompositeByteBuf {
    /**
     * Values of at least 64 KiB are appended without a copy. Below it a copy costs less than one more
     * component and one more entry in the gathering write.
     */
    public static final int MIN_APPEND_BYTES = 64 * 1024;

    /**
     * Room added after each appended value and at each growth: the fields a Produce request can write
     * between two batches are at most a topic change (int16 length + 249-byte name + int32 partition
     * count, 255 bytes) and a partition header (int32 partition + int32 records length, 8 bytes), 263
     * bytes, rounded up to 512.
     */
    static final int ROOM_BYTES = 512;

    private GatheringBuffer(ByteBufAllocator alloc) {
        super(new RoomAllocator(alloc), true, Integer.MAX_VALUE);
        addRoom();
    }

    /**
     * An empty frame whose components come from {@code alloc} (the channel's allocator).
     *
     * @return a buffer with readerIndex = writerIndex = 0 and {@link #ROOM_BYTES} of room; the caller
     *     owns it
     */
    public static GatheringBuffer direct(ByteBufAllocator alloc) {
        return new GatheringBuffer(alloc);
    }

    /**
     * Appends {@code length} bytes of {@code value} from {@code index} as a retained slice, not a copy,
     * and advances the writerIndex past them. {@code value}'s indexes are not touched.
     */
    public void appendRetainedSlice(ByteBuf value, int index, int length) {
        // The unwritten room of the last component would otherwise lie between the bytes written so far
        // and the new component: cut the capacity back to the writerIndex first.
        capacity(writerIndex());
        addComponent(true, value.retainedSlice(index, length));
        addRoom();
    }

    /** Room for the next fields: a component of ROOM_BYTES counted in the capacity, not written. */
    private void addRoom() {
        ByteBuf room = alloc().directBuffer(ROOM_BYTES);
        addComponent(false, room.writerIndex(ROOM_BYTES));
    }

    /**
     * The components' allocator: the channel's, except that a buffer that must grow grows by the
     * missing bytes plus {@link #ROOM_BYTES} rather than to the next power of two of its whole size.
     */
    private static final class RoomAllocator extends AbstractByteBufAllocator {
        private final ByteBufAllocator delegate;

        RoomAllocator(ByteBufAllocator delegate) {
            super(true);
            this.delegate = delegate;
        }

        @Override
        public int calculateNewCapacity(int minNewCapacity, int maxCapacity) {
            return (int) Math.min(maxCapacity, (long) minNewCapacity + ROOM_BYTES);
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            return delegate.directBuffer(initialCapacity, maxCapacity);
        }

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            return delegate.heapBuffer(initialCapacity, maxCapacity);
        }

        @Override
        public boolean isDirectBufferPooled() {
            return delegate.isDirectBufferPooled();
        }
    }
}
