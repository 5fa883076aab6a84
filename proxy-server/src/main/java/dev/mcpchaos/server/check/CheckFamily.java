package dev.mcpchaos.server.check;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.List;

/**
 * A family of the referee's checks (lifecycle, tools, HTTP headers, ...): the {@link Check}s it
 * makes (their ids, severities and summaries are the {@link Check} constants), why one could not
 * run on what was seen, and what it looks at as the {@link Tracker} follows each session. Every
 * family is in {@link CheckFamilies#ALL}, and every check belongs to exactly one (a guard test holds both to
 * docs/checks.md).
 *
 * <p>A hook only reads the session and reports through {@link Tracker#findings}; the tracker
 * keeps the state (requests in flight, lifecycle, what reached each peer, fault excuses).
 * Adding a check = its {@link Check} constant, its code in its family, its section in
 * docs/checks.md.
 */
interface CheckFamily {

    /** The checks this family makes. */
    List<Check> checks();

    /** Why {@code check} (one of {@link #checks()}) could not run on what {@code seen} saw, or null when it could. */
    default String whyNotRun(Check check, Tracker seen) {
        return null;
    }

    /** A request, before the session learns from it (the revision a sessionless request names). */
    default void requestSent(Tracker t, TrackedSession s, Referee.Message m, Object id, String method) {
    }

    /**
     * A request, once the session knows the revision it names ({@code sessionless}, or null), and
     * before it is in flight; a check may note on {@code p} what it found.
     */
    default void request(Tracker t, TrackedSession s, Referee.Message m, Pending p, JsonNode params,
                         String sessionless) {
    }

    /** The client went on after the initialize answer reached it: a request, or a notification it sent. */
    default void clientWentOn(Tracker t, TrackedSession s, Referee.Message m, Object id, String method) {
    }

    /** A notification. */
    default void notification(Tracker t, TrackedSession s, Referee.Message m, String method, JsonNode params) {
    }

    /**
     * A response, once the tracker settled what it answers: {@code p} the request, or null when it
     * answers none in flight; {@code error} and {@code result} as they are present.
     */
    default void response(Tracker t, TrackedSession s, Referee.Message m, Object id, Pending p, JsonNode error,
                          JsonNode result) {
    }
}
