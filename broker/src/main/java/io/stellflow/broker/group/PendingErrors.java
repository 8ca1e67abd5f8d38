package io.stellflow.broker.group;

/** Temporary copies of the group error codes until the protocol module's Errors has them. */
final class PendingErrors {
    static final short UNKNOWN_MEMBER_ID = 42;
    static final short FENCED_MEMBER_EPOCH = 43;
    static final short STALE_MEMBER_EPOCH = 44;
    static final short GROUP_ID_NOT_FOUND = 45;
    static final short NON_EMPTY_GROUP = 46;
    static final short UNRELEASED_INSTANCE_ID = 47;
    static final short GROUP_SUBSCRIBED_TO_TOPIC = 48;
    static final short UNSUPPORTED_ASSIGNOR = 49;
    static final short GROUP_MAX_SIZE_REACHED = 50;

    private PendingErrors() {}
}
