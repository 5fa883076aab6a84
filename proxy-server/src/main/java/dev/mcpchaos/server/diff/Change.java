package dev.mcpchaos.server.diff;

import java.util.Objects;

/**
 * One difference between two contracts.
 *
 * @param breaking whether a client written against the old contract may fail on the new one
 * @param kind     a stable id, such as {@code tool.removed} or {@code param.enum.narrowed}
 * @param subject  what changed: {@code tool search}, {@code tool search / param limit}
 * @param detail   old and new, in words
 */
public record Change(boolean breaking, String kind, String subject, String detail) {

    public Change {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(detail, "detail");
    }

    static Change breaking(String kind, String subject, String detail) {
        return new Change(true, kind, subject, detail);
    }

    static Change compatible(String kind, String subject, String detail) {
        return new Change(false, kind, subject, detail);
    }

    /** {@code breaking} or {@code compatible}. */
    public String classification() {
        return breaking ? "breaking" : "compatible";
    }
}
