package dev.mcpchaos.rules;

/**
 * One rule's counters, as {@code GET /status} shows them.
 *
 * @param name the rule's name
 * @param enabled whether it is switched on
 * @param fault its fault's type
 * @param matched how many messages it matched since it was added or last changed
 * @param injected how many of those it injected its fault into
 */
public record RuleStats(String name, boolean enabled, String fault, long matched, long injected) {
}
