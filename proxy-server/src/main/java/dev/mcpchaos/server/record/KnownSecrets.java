package dev.mcpchaos.server.record;

import dev.mcpchaos.server.redact.SecretRedactor;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The secrets a recording looks for as they are, in every string, whatever surrounds them: the
 * values of the {@code --redact-env} variables, given at the start, and each distinctive secret
 * the {@link Redactor}s recognise on the way (by its name, its scheme, its shape), so that a value
 * that gave itself away once is redacted in every later message too, where nothing gives it away.
 * Shared by the cassettes of one recording (a directory's too: a secret seen in one session is one
 * in the next). Not thread-safe: the recorder's writer thread has it.
 *
 * <p>A long recording can learn many secrets (a token per session), and every string of every
 * message is searched for all of them; so the search is one pass over the text, looking up each
 * run of {@value #KEY} characters in an index of the secrets' first ones, rather than one search
 * per secret. Shorter secrets (environment values may be short) are searched for one by one.
 */
final class KnownSecrets {

    /** How many characters of a secret the index holds. */
    private static final int KEY = SecretRedactor.DISTINCTIVE_LENGTH;

    /** In the order they became known, so that {@link #since} can tell the late ones. */
    private final List<String> inOrder = new ArrayList<>();
    private final Set<String> all = new HashSet<>();
    /** Secrets of at least {@value #KEY} characters by their first {@value #KEY}. */
    private final Map<String, List<String>> byStart = new HashMap<>();
    /** Secrets shorter than that. */
    private final List<String> shorter = new ArrayList<>();

    /** @param values literal secrets known from the start (empty ones hide nothing and are left out) */
    KnownSecrets(List<String> values) {
        values.forEach(this::add);
    }

    /** Adds a secret; false when it is empty or known already. */
    boolean add(String secret) {
        if (secret.isEmpty() || !all.add(secret)) {
            return false;
        }
        inOrder.add(secret);
        if (secret.length() >= KEY) {
            byStart.computeIfAbsent(secret.substring(0, KEY), k -> new ArrayList<>(1)).add(secret);
        } else {
            shorter.add(secret);
        }
        return true;
    }

    /** The known secrets that occur in {@code text}, longest first. */
    List<String> in(String text) {
        if (all.isEmpty()) {
            return List.of();
        }
        Set<String> found = new HashSet<>();
        for (String secret : shorter) {
            if (text.contains(secret)) {
                found.add(secret);
            }
        }
        if (!byStart.isEmpty()) {
            for (int i = 0; i + KEY <= text.length(); i++) {
                List<String> candidates = byStart.get(text.substring(i, i + KEY));
                if (candidates != null) {
                    for (String secret : candidates) {
                        if (text.startsWith(secret, i)) {
                            found.add(secret);
                        }
                    }
                }
            }
        }
        if (found.isEmpty()) {
            return List.of();
        }
        return longestFirst(found);
    }

    /** How many secrets are known: a mark for {@link #since}. */
    int count() {
        return inOrder.size();
    }

    /** The secrets that became known after {@code mark} (a {@link #count()}), longest first. */
    List<String> since(int mark) {
        return longestFirst(inOrder.subList(Math.min(mark, inOrder.size()), inOrder.size()));
    }

    /** Longest first, so that a secret holding a shorter one is replaced whole. */
    private static List<String> longestFirst(Collection<String> secrets) {
        List<String> sorted = new ArrayList<>(secrets);
        sorted.sort(Comparator.comparingInt(String::length).reversed());
        return sorted;
    }
}
