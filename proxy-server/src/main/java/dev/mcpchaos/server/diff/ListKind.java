package dev.mcpchaos.server.diff;

/** The lists a contract is made of: the method that asks for one, the array its answer carries, and its key. */
public enum ListKind {
    TOOLS("tools/list", "tools", "name", "tools"),
    RESOURCES("resources/list", "resources", "uri", "resources"),
    TEMPLATES("resources/templates/list", "resourceTemplates", "uriTemplate", "resource templates"),
    PROMPTS("prompts/list", "prompts", "name", "prompts");

    private final String method;
    private final String field;
    private final String key;
    private final String noun;

    ListKind(String method, String field, String key, String noun) {
        this.method = method;
        this.field = field;
        this.key = key;
        this.noun = noun;
    }

    /** The request that asks for the list: {@code tools/list}. */
    public String method() {
        return method;
    }

    /** The array of the answer's result that holds the items: {@code tools}. */
    public String field() {
        return field;
    }

    /** The member that names an item: {@code name}, {@code uri}. */
    public String key() {
        return key;
    }

    /** The items in words, plural: {@code resource templates}. */
    public String noun() {
        return noun;
    }

    /** The kind whose {@link #method()} is {@code method}, or null. */
    static ListKind ofMethod(String method) {
        for (ListKind kind : values()) {
            if (kind.method.equals(method)) {
                return kind;
            }
        }
        return null;
    }
}
