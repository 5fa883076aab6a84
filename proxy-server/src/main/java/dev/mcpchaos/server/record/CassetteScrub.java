package dev.mcpchaos.server.record;

import com.fasterxml.jackson.core.io.JsonStringEncoder;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;

/**
 * Takes secrets out of a cassette already written: the recorder's last step, for the secrets it
 * recognised only after lines that hold them were on disk (see {@link KnownSecrets}). Works on the
 * lines' text, not on parsed JSON, so that every other byte of the file stays as the writer wrote
 * it (the keys' order, numbers' text): a secret is replaced only inside a JSON string (never in a
 * number, which would break the line), only in its JSON-escaped form as the writer wrote it, and
 * never inside a placeholder. The file is rewritten next to itself and moved into place, so a
 * failure leaves the cassette as it was.
 */
final class CassetteScrub {

    private static final JsonStringEncoder ESCAPE = JsonStringEncoder.getInstance();

    private CassetteScrub() {
    }

    /**
     * Replaces each of {@code secrets} (longest first) in {@code file}'s strings by its placeholder.
     *
     * @param placeholder gives a secret's placeholder in this cassette; asked only for the secrets
     *                    found, so that one the cassette never held takes no number
     * @return how many places were replaced; 0 leaves the file untouched
     * @throws IOException when it cannot be read or replaced, or is no regular file (a pipe, a
     *                     device) and so cannot be read again; the file is as it was then
     */
    static int scrub(Path file, List<String> secrets, UnaryOperator<String> placeholder) throws IOException {
        // The file itself, not a link to it; and one that can be read again and replaced.
        Path real = file.toRealPath();
        if (!Files.isRegularFile(real)) {
            throw new IOException("not a regular file, so it cannot be rewritten");
        }
        // Looked for as the writer wrote them, one pass over each line for all of them (see KnownSecrets).
        Map<String, String> byEscaped = new HashMap<>();
        for (String secret : secrets) {
            byEscaped.putIfAbsent(new String(ESCAPE.quoteAsString(secret)), secret);
        }
        KnownSecrets escaped = new KnownSecrets(List.copyOf(byEscaped.keySet()));
        Path tmp = Files.createTempFile(real.getParent(), "." + real.getFileName(), ".scrub");
        int replaced = 0;
        try {
            try (BufferedReader in = Files.newBufferedReader(real, StandardCharsets.UTF_8);
                 BufferedWriter out = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    String scrubbed = line;
                    for (String found : escaped.in(line)) {
                        if (scrubbed.contains(found)) { // a longer one replaced may have held it
                            int[] count = {0};
                            scrubbed = inStrings(scrubbed, found, () -> placeholder.apply(byEscaped.get(found)), count);
                            replaced += count[0];
                        }
                    }
                    out.write(scrubbed);
                    out.write('\n');
                }
            }
            if (replaced > 0) {
                keepPermissions(real, tmp);
                Files.move(tmp, real, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
        return replaced;
    }

    /** A temporary file is made readable by its owner only: the cassette keeps who could read it. */
    private static void keepPermissions(Path from, Path to) throws IOException {
        try {
            Files.setPosixFilePermissions(to, Files.getPosixFilePermissions(from));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: its defaults it is
        }
    }

    /**
     * {@code line} with {@code escaped} replaced inside each JSON string token, outside
     * placeholders; {@code count[0]} gets how many were.
     */
    static String inStrings(String line, String escaped, Supplier<String> placeholder, int[] count) {
        StringBuilder sb = new StringBuilder(line.length());
        int i = 0;
        while (i < line.length()) {
            char c = line.charAt(i);
            if (c != '"') {
                sb.append(c);
                i++;
                continue;
            }
            int end = i + 1;
            while (end < line.length() && line.charAt(end) != '"') {
                end += line.charAt(end) == '\\' ? 2 : 1;
            }
            end = Math.min(end, line.length());
            sb.append('"').append(outsidePlaceholders(line.substring(i + 1, end), escaped, placeholder, count));
            if (end < line.length()) {
                sb.append('"');
            }
            i = end + 1;
        }
        return sb.toString();
    }

    private static String outsidePlaceholders(String text, String escaped, Supplier<String> placeholder,
                                              int[] count) {
        if (!text.contains(escaped)) {
            return text;
        }
        Matcher m = Redactor.PLACEHOLDER.matcher(text);
        StringBuilder sb = new StringBuilder(text.length());
        int last = 0;
        while (true) {
            boolean found = m.find();
            int segmentEnd = found ? m.start() : text.length();
            String segment = text.substring(last, segmentEnd);
            int from = 0;
            for (int at = segment.indexOf(escaped); at >= 0; at = segment.indexOf(escaped, from)) {
                sb.append(segment, from, at).append(placeholder.get());
                count[0]++;
                from = at + escaped.length();
            }
            sb.append(segment, from, segment.length());
            if (!found) {
                return sb.toString();
            }
            sb.append(m.group());
            last = m.end();
        }
    }
}
