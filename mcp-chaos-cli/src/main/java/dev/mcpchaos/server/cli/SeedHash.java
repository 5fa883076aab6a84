package dev.mcpchaos.server.cli;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The seed {@code --seed-from-env VAR} derives from the variable's value: the first 8 bytes of the
 * SHA-256 digest of its UTF-8 bytes, read as a big-endian number, with the top bit cleared (a
 * seed from 0 to 2^63-1, like a generated one). The same pod name gives the same seed in every
 * run, JVM and version; in a shell:
 * <pre>echo $(( 0x$(printf %s "$POD_NAME" | sha256sum | cut -c1-16) &amp; 0x7fffffffffffffff ))</pre>
 */
final class SeedHash {

    private SeedHash() {
    }

    /** The seed for {@code value}. */
    static long of(String value) {
        byte[] digest;
        try {
            digest = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this Java runtime", e); // every JRE has it
        }
        long seed = 0;
        for (int i = 0; i < 8; i++) {
            seed = seed << 8 | (digest[i] & 0xff);
        }
        return seed & Long.MAX_VALUE;
    }
}
