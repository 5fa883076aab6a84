package dev.mcpchaos.server.drill;

/** A scenario's verdict. */
public enum Outcome {
    /** The fault fired and the client did what a resilient client does. */
    PASS,
    /** The fault fired and the client did not. */
    FAIL,
    /** The scenario does not apply to this run (its transport or era is another). */
    NOT_APPLICABLE,
    /** The fault never fired (the client never sent what it acts on): nothing was put to the test. */
    NOT_EXERCISED,
    /** The scenario is in the catalogue, but this version cannot run it yet. */
    NOT_BUILT;

    /** Its name in tables and reports: {@code pass}, {@code not exercised}, ... */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ');
    }
}
