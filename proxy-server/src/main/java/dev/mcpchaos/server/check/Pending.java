package dev.mcpchaos.server.check;

import java.util.function.IntSupplier;

/**
 * A request, from when its sender sent it until it is answered: first in flight from the
 * sender, then (once delivered) owed an answer by the receiver. What the {@link TrackedSession}
 * keeps of it, and what the faults did to it.
 */
final class Pending {
    final Object id;
    final String method;
    final String tool;
    final boolean firstPage;
    final long index;
    final String text;
    /** What its HTTP exchange was answered with so far, or null (see {@link Referee.Message#answeredStatus}). */
    final IntSupplier answeredStatus;
    /** Whether the receiver got its sender's notifications/cancelled (before its answer went). */
    boolean cancelled;
    /** For a client's tools/call: whether its arguments are valid against the listed schema; null: no verdict. */
    Boolean argumentsValid;
    /** How many copies reached the receiver (a duplicate fault makes two), and how many it answered. */
    int deliveries;
    int answers;
    /** When the first copy reached the receiver: the deadline runs from here. */
    long deliveredAt;
    /** A rule whose fault changed when it reached the receiver (latency, throttle, reorder), or null. */
    String heldBy;
    /** When its sender sent a cancel of it, or -1. */
    long cancelSentAt = -1;
    /** The first rule whose fault acted on it, or null. */
    String faultedBy;
    /** A rule whose fault ended the connection or the server before it could be answered, or null. */
    String excusedBy;

    Pending(Object id, String method, String tool, boolean firstPage, Referee.Message m) {
        this(id, method, tool, firstPage, m.index(), m.text(), m.answeredStatus());
    }

    Pending(Object id, String method, String tool, boolean firstPage, long index, String text,
            IntSupplier answeredStatus) {
        this.answeredStatus = answeredStatus;
        this.id = id;
        this.method = method;
        this.tool = tool;
        this.firstPage = firstPage;
        this.index = index;
        this.text = text.length() > 4 * Referee.EXCERPT_CHARS ? text.substring(0, 4 * Referee.EXCERPT_CHARS) : text;
    }
}
