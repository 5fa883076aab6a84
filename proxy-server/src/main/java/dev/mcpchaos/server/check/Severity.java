package dev.mcpchaos.server.check;

/** How bad a {@link Check}'s violation is: an error breaks clients; a warning breaks a SHOULD of the spec. */
public enum Severity {
    ERROR,
    WARNING;

    /** {@code error} or {@code warning}, as in reports and on the command line. */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
