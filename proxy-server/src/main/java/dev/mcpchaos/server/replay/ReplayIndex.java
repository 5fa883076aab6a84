package dev.mcpchaos.server.replay;

import dev.mcpchaos.server.internal.JsonTrees;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.core.frame.Direction;
import dev.mcpchaos.server.peer.CassetteAnswers;
import dev.mcpchaos.server.record.Cassette;
import dev.mcpchaos.server.record.CassetteEntry;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What a replayed server answers, found in cassettes: each recorded client request, keyed as its
 * {@link Matching} says (by default its method and its params without {@code _meta}, so the
 * JSON-RPC id and the progress token do not count; {@code initialize} by its method alone:
 * clients differ in their name and capabilities), with what the server sent for it (its progress
 * notifications and its answer) and the notifications and requests the server sent of its own
 * accord after it, each with its recorded delay after the request.
 *
 * <p>Repeats of one key are served in recorded order, then the last one again (or an error, see
 * {@link OnExhausted}). In {@link MatchMode#SEQUENTIAL} mode the requests must come in recorded
 * order instead ({@link #next}). In {@link MatchMode#METHOD} mode the key is the method alone
 * (with the name for {@code tools/call} and {@code prompts/get}), so each method is a queue of its
 * recorded answers. Not thread-safe: one replay loop uses it.
 */
final class ReplayIndex {

    /** A message the server sent, {@code atMillis} after the client message it belongs to (as recorded). */
    record Timed(JsonNode message, double atMillis) {
    }

    /** What the server sent for one recorded client message. */
    record Answer(List<Timed> before, List<Timed> progress, Timed response, List<Timed> after, boolean sse) {
    }

    /** One recorded request in recorded order, for {@link MatchMode#SEQUENTIAL}. */
    private record Step(String key, Answer answer) {
    }

    private final Matching matching;
    private final Map<String, List<Answer>> answers = new LinkedHashMap<>();
    private final Map<String, Integer> served = new HashMap<>();
    private final List<Step> sequence = new ArrayList<>();
    private int position;
    /** What the server sent after a client notification (such as notifications/initialized), by method. */
    private final Map<String, List<List<Timed>>> afterNotifications = new LinkedHashMap<>();
    private final Map<String, Integer> notificationsServed = new HashMap<>();
    /**
     * The recorded keys that hold a redaction placeholder, parsed: the live request carries the
     * real secret where the cassette has {@code <redacted:N>}, so these match by structure, the
     * placeholder standing for any text ({@link #resolve}).
     */
    private final Map<String, JsonNode> withPlaceholders = new LinkedHashMap<>();
    /**
     * The {@link MatchMode#METHOD} keys of every recorded request, whatever the mode: a request
     * with no recording in another mode is told when {@code --match method} would serve it.
     */
    private final Set<String> methodKeys = new java.util.HashSet<>();
    /** The methods whose {@code params.name} picks the handler, so a part of the METHOD key. */
    private static final Set<String> NAMED = Set.of("tools/call", "prompts/get");

    ReplayIndex(List<Cassette> cassettes) {
        this(cassettes, Matching.DEFAULT);
    }

    ReplayIndex(List<Cassette> cassettes, Matching matching) {
        this.matching = matching;
        for (Cassette cassette : cassettes) {
            index(cassette.entries(), CassetteAnswers.of(cassette));
        }
    }

    /**
     * Indexes one cassette's requests: the answer to each is the one {@code recorded} pairs it
     * with (the index diff and verify read too); what the server sent around it is found here.
     */
    private void index(List<CassetteEntry> entries, CassetteAnswers recorded) {
        for (int i = 0; i < entries.size(); i++) {
            CassetteEntry entry = entries.get(i);
            JsonNode message = entry.message();
            if (entry.direction() != Direction.CLIENT_TO_SERVER || message == null || !message.has("method")) {
                continue;
            }
            String method = message.get("method").asText();
            double t0 = entry.timeMillis();
            if (!message.has("id")) {
                afterNotifications.computeIfAbsent(method, m -> new ArrayList<>())
                        .add(unsolicitedAfter(entries, i, entry.session(), t0));
                continue;
            }
            CassetteEntry answered = recorded.answerTo(entry);
            if (answered == null) {
                continue; // never answered in the recording: nothing to replay
            }
            String token = progressToken(message);
            List<Timed> progress = new ArrayList<>();
            // The server's own messages between this request and its answer, up to the client's
            // next message (a concurrent request's, whose own they then are): replayed before it.
            List<Timed> before = new ArrayList<>();
            boolean clientSpokeSince = false;
            Timed response = null;
            boolean sse = false;
            int end = i + 1;
            for (; end < entries.size(); end++) {
                CassetteEntry later = entries.get(end);
                JsonNode m = later.message();
                if (m == null || !later.session().equals(entry.session())) {
                    continue;
                }
                if (later.direction() != Direction.SERVER_TO_CLIENT) {
                    clientSpokeSince = true;
                    continue;
                }
                Timed timed = new Timed(m, later.timeMillis() - t0);
                if (later == answered) {
                    response = timed;
                    sse = later.http() != null && later.http().sse();
                    break;
                }
                if (token != null && "notifications/progress".equals(m.path("method").asText())
                        && token.equals(m.path("params").path("progressToken").asText(null))) {
                    progress.add(timed);
                } else if (!clientSpokeSince && m.has("method") && !"notifications/progress".equals(m.get("method").asText())) {
                    before.add(timed);
                }
            }
            if (response == null) {
                continue; // cannot happen: the answer is a later entry of the session
            }
            Answer answer = new Answer(before, progress, response, unsolicitedAfter(entries, end, entry.session(), t0), sse);
            String key = key(message);
            answers.computeIfAbsent(key, k -> new ArrayList<>()).add(answer);
            methodKeys.add(methodKey(message));
            if (key.contains("<redacted:") && !withPlaceholders.containsKey(key)) {
                JsonNode parsed = keyJson(key);
                if (parsed != null) {
                    withPlaceholders.put(key, parsed);
                }
            }
            sequence.add(new Step(key, answer));
        }
    }

    /**
     * The server's own notifications and requests (not progress, not answers) recorded after
     * position {@code from} and before the client's next message of the session, timed from {@code t0}.
     */
    private static List<Timed> unsolicitedAfter(List<CassetteEntry> entries, int from, String session, double t0) {
        List<Timed> out = new ArrayList<>();
        for (int j = from + 1; j < entries.size(); j++) {
            CassetteEntry e = entries.get(j);
            if (!e.session().equals(session) || e.message() == null) {
                continue;
            }
            if (e.direction() == Direction.CLIENT_TO_SERVER) {
                break;
            }
            JsonNode m = e.message();
            if (m.has("method") && !"notifications/progress".equals(m.get("method").asText())) {
                out.add(new Timed(m, e.timeMillis() - t0));
            }
        }
        return out;
    }

    /** How requests are matched. */
    Matching matching() {
        return matching;
    }

    /** The answer to a live request, or null when nothing like it was recorded. */
    Answer answer(JsonNode request) {
        return answer(request, OnExhausted.LAST);
    }

    /**
     * The answer to a live request: the next of its recordings, then as {@code onExhausted} says
     * ({@link #EXHAUSTED} for {@link OnExhausted#ERROR}); null when nothing like it was recorded.
     */
    Answer answer(JsonNode request, OnExhausted onExhausted) {
        String key = resolve(key(request));
        List<Answer> recorded = answers.get(key);
        if (recorded == null) {
            return null;
        }
        int n = served.merge(key, 1, Integer::sum) - 1;
        if (n >= recorded.size() && onExhausted == OnExhausted.ERROR) {
            return EXHAUSTED;
        }
        return recorded.get(Math.min(n, recorded.size() - 1));
    }

    /**
     * {@link MatchMode#SEQUENTIAL}: the answer to a live request when it is the next recorded
     * request (which then counts as served), else null (and the next one stays expected).
     */
    Answer next(JsonNode request) {
        if (position >= sequence.size() || !sequence.get(position).key().equals(resolve(key(request)))) {
            return null;
        }
        return sequence.get(position++).answer();
    }

    /** {@link MatchMode#SEQUENTIAL}: the key of the request expected next, or null when every one was served. */
    String expectedNext() {
        return position < sequence.size() ? sequence.get(position).key() : null;
    }

    /** {@link MatchMode#SEQUENTIAL}: how many recorded requests were served in order so far. */
    int position() {
        return position;
    }

    /** How many times a request of this key was recorded. */
    int recordings(JsonNode request) {
        List<Answer> recorded = answers.get(resolve(key(request)));
        return recorded == null ? 0 : recorded.size();
    }

    /** What {@link #answer(JsonNode, OnExhausted)} returns for a request whose recordings are used up. */
    static final Answer EXHAUSTED = new Answer(List.of(), List.of(), null, List.of(), false);

    /** Whether the recorded answer to a request like this one came as SSE events (over HTTP). */
    boolean answeredAsStream(JsonNode request) {
        String key = resolve(key(request));
        if (matching.mode() == MatchMode.SEQUENTIAL) {
            return position < sequence.size() && sequence.get(position).key().equals(key)
                    && sequence.get(position).answer().sse();
        }
        List<Answer> recorded = answers.get(key);
        if (recorded == null) {
            return false;
        }
        int n = served.getOrDefault(key, 0);
        return recorded.get(Math.min(n, recorded.size() - 1)).sse();
    }

    /** What the server sent after a client notification of this method, or nothing. */
    List<Timed> afterNotification(String method) {
        List<List<Timed>> recorded = afterNotifications.get(method);
        if (recorded == null) {
            return List.of();
        }
        int n = notificationsServed.merge(method, 1, Integer::sum) - 1;
        return recorded.get(Math.min(n, recorded.size() - 1));
    }

    /**
     * The recorded key a live key stands for: itself when recorded, else a recorded key with
     * placeholders that matches it (same method; every placeholder in a recorded string matches any
     * text there, everything else equal), else itself.
     */
    String resolve(String liveKey) {
        if (answers.containsKey(liveKey)) {
            return liveKey;
        }
        String method = methodOfKey(liveKey);
        if (matching.mode() == MatchMode.METHOD && answers.containsKey(method)) {
            // A call recorded without a name (a fixture that kept no params) serves the tools
            // that have no recording of their own.
            return method;
        }
        if (withPlaceholders.isEmpty()) {
            return liveKey;
        }
        JsonNode live = null;
        for (Map.Entry<String, JsonNode> recorded : withPlaceholders.entrySet()) {
            if (!methodOfKey(recorded.getKey()).equals(method)) {
                continue;
            }
            if (live == null && (live = keyJson(liveKey)) == null) {
                return liveKey;
            }
            if (matchesWithPlaceholders(recorded.getValue(), live)) {
                return recorded.getKey();
            }
        }
        return liveKey;
    }

    private static String methodOfKey(String key) {
        int space = key.indexOf(' ');
        return space < 0 ? key : key.substring(0, space);
    }

    /** The JSON part of a key ({@code method canonical}), or null. */
    private static JsonNode keyJson(String key) {
        int space = key.indexOf(' ');
        if (space < 0) {
            return null;
        }
        try {
            return JsonTrees.read(key.substring(space + 1));
        } catch (java.io.IOException e) {
            return null;
        }
    }

    private static final java.util.regex.Pattern PLACEHOLDER = java.util.regex.Pattern.compile("<redacted:\\d+>");

    static boolean matchesWithPlaceholders(JsonNode recorded, JsonNode live) {
        if (recorded.isTextual() && live.isTextual()) {
            String text = recorded.asText();
            if (!PLACEHOLDER.matcher(text).find()) {
                return text.equals(live.asText());
            }
            StringBuilder regex = new StringBuilder();
            java.util.regex.Matcher m = PLACEHOLDER.matcher(text);
            int last = 0;
            while (m.find()) {
                regex.append(java.util.regex.Pattern.quote(text.substring(last, m.start()))).append("(?s).+");
                last = m.end();
            }
            regex.append(java.util.regex.Pattern.quote(text.substring(last)));
            return live.asText().matches(regex.toString());
        }
        if (recorded.isObject() && live.isObject()) {
            if (recorded.size() != live.size()) {
                return false;
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = recorded.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                JsonNode other = live.get(field.getKey());
                if (other == null || !matchesWithPlaceholders(field.getValue(), other)) {
                    return false;
                }
            }
            return true;
        }
        if (recorded.isArray() && live.isArray()) {
            if (recorded.size() != live.size()) {
                return false;
            }
            for (int i = 0; i < recorded.size(); i++) {
                if (!matchesWithPlaceholders(recorded.get(i), live.get(i))) {
                    return false;
                }
            }
            return true;
        }
        return recorded.equals(live);
    }

    /** The recorded request most like {@code request}: the same method if any, then the nearest params. */
    String closest(JsonNode request) {
        String method = request.path("method").asText();
        String wanted = key(request);
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String key : answers.keySet()) {
            int distance = distance(wanted, key) + (key.startsWith(method + " ") || key.equals(method) ? 0 : 1_000_000);
            if (distance < bestDistance) {
                bestDistance = distance;
                best = key;
            }
        }
        return best;
    }

    /**
     * Whether {@link MatchMode#METHOD} would serve {@code request} from these cassettes: a request
     * of its method (and name, for {@code tools/call} and {@code prompts/get}) was recorded, or one
     * of its method without a name.
     */
    boolean servedByMethod(JsonNode request) {
        String key = methodKey(request);
        return methodKeys.contains(key) || methodKeys.contains(request.path("method").asText());
    }

    int recordedRequests() {
        return answers.values().stream().mapToInt(List::size).sum();
    }

    /**
     * The matching key of a message, {@code method canonical}, the ignored paths left out first.
     * Default and sequential: canonical params without {@code _meta}, members sorted, absent as
     * {}; {@code initialize} by its method alone. Strict: the whole message but its id and
     * method, members sorted. Method: {@link #methodKey}.
     */
    String key(JsonNode message) {
        if (matching.mode() == MatchMode.METHOD) {
            return methodKey(message);
        }
        String method = message.path("method").asText();
        JsonNode compared = matching.withoutIgnored(message);
        if (matching.mode() == MatchMode.STRICT) {
            ObjectNode rest = JsonNodeFactory.instance.objectNode();
            compared.fields().forEachRemaining(field -> {
                if (!field.getKey().equals("id") && !field.getKey().equals("method")) {
                    rest.set(field.getKey(), field.getValue());
                }
            });
            return method + " " + JsonTrees.text(canonical(rest, false));
        }
        if (method.equals("initialize")) {
            return method;
        }
        JsonNode params = compared.get("params");
        JsonNode canonical = canonical(params == null || params.isNull() ? JsonNodeFactory.instance.objectNode() : params,
                true);
        return method + " " + JsonTrees.text(canonical);
    }

    /**
     * The {@link MatchMode#METHOD} key, the ignored paths left out first: the method, and for
     * {@code tools/call} and {@code prompts/get} the name as {@code {"name":...}} when there is
     * one ({@code tools/call {"name":"echo"}}), so that it reads as the other modes' keys do.
     */
    String methodKey(JsonNode message) {
        String method = message.path("method").asText();
        if (!NAMED.contains(method)) {
            return method;
        }
        JsonNode name = matching.withoutIgnored(message).path("params").get("name");
        if (name == null || name.isNull()) {
            return method;
        }
        ObjectNode named = JsonNodeFactory.instance.objectNode();
        named.set("name", canonical(name, false));
        return method + " " + JsonTrees.text(named);
    }

    private static JsonNode canonical(JsonNode node, boolean top) {
        if (node.isObject()) {
            TreeMap<String, JsonNode> sorted = new TreeMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                if (!(top && field.getKey().equals("_meta"))) {
                    sorted.put(field.getKey(), canonical(field.getValue(), false));
                }
            }
            ObjectNode out = JsonNodeFactory.instance.objectNode();
            sorted.forEach(out::set);
            return out;
        }
        if (node.isArray()) {
            var out = JsonNodeFactory.instance.arrayNode();
            node.forEach(child -> out.add(canonical(child, false)));
            return out;
        }
        return node;
    }

    static String progressToken(JsonNode request) {
        JsonNode token = request.path("params").path("_meta").get("progressToken");
        return token == null || token.isNull() ? null : token.asText();
    }

    /** Edit distance over at most the first 200 characters of each: enough to tell which is nearest. */
    private static int distance(String a, String b) {
        a = a.length() > 200 ? a.substring(0, 200) : a;
        b = b.length() > 200 ? b.substring(0, 200) : b;
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                current[j] = Math.min(Math.min(current[j - 1] + 1, previous[j] + 1), previous[j - 1] + cost);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
