package dev.mcpchaos.server.diff;

import java.util.Objects;

/**
 * Something a diff could not compare because one side (or both) does not hold it: a list a
 * cassette never asked for, recorded calls a live side was not sent. Reported beside the changes,
 * so that "no changes" is never said of what was not looked at.
 *
 * @param subject what was not compared: {@code resources}, {@code tools added}, {@code recorded calls}
 * @param reason  why, naming the side: {@code old.ndjson never listed them (no answer to resources/list in it)}
 */
public record NotCompared(String subject, String reason) {

    public NotCompared {
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(reason, "reason");
    }
}
