package dev.mcpchaos.server.replay.verify;

import java.util.List;

/**
 * What a verify run found, one item per recorded request.
 *
 * @param items the requests, in recorded order
 */
public record VerifyResult(List<Item> items) {

    public VerifyResult {
        items = List.copyOf(items);
    }

    /**
     * One request's outcome.
     *
     * @param seq         its line in the cassette
     * @param id          its JSON-RPC id, as JSON
     * @param label       its method (and tool or prompt name)
     * @param differences where the live answer differs; null when there was none
     * @param answered    whether the live server answered in time
     * @param answerSeq   the cassette line of the recorded answer, or -1 when none was recorded
     * @param live        the live answer, or null
     */
    public record Item(long seq, String id, String label, List<JsonDiff.Difference> differences, boolean answered,
                       long answerSeq, com.fasterxml.jackson.databind.JsonNode live) {
        /** {@code same}, {@code differs} or {@code unanswered}. */
        public String verdict() {
            return !answered ? "unanswered" : differences.isEmpty() ? "same" : "differs";
        }
    }

    /** Whether every request was answered as recorded. */
    public boolean allSame() {
        return items.stream().allMatch(i -> "same".equals(i.verdict()));
    }

    /** One line per request: verdict, id, label, and the first differing paths. */
    public String report() {
        StringBuilder b = new StringBuilder();
        for (Item i : items) {
            b.append(String.format("%-10s #%-5d id=%s %s", i.verdict(), i.seq(), i.id(), i.label()));
            if (i.answered() && !i.differences().isEmpty()) {
                List<JsonDiff.Difference> d = i.differences();
                b.append("  ").append(String.join(" ", d.subList(0, Math.min(5, d.size())).stream()
                        .map(Object::toString).toList()));
                if (d.size() > 5) {
                    b.append(" (+").append(d.size() - 5).append(" more)");
                }
            }
            b.append('\n');
        }
        long same = items.stream().filter(i -> "same".equals(i.verdict())).count();
        b.append(same).append('/').append(items.size()).append(items.size() == 1 ? " request" : " requests")
                .append(" answered as recorded\n");
        return b.toString();
    }
}
