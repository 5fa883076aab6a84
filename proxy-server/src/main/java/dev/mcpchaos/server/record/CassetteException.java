package dev.mcpchaos.server.record;

/** A cassette that cannot be read; the message names the file, the line and what was expected. */
public final class CassetteException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public CassetteException(String message) {
        super(message);
    }
}
