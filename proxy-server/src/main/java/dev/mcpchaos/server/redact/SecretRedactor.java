package dev.mcpchaos.server.redact;

import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Replaces secrets in a piece of text, JSON or not, with {@value #REDACTED}, for logs that show
 * message content (the traffic log; the coming recorder). Two kinds of secret are recognised:
 *
 * <ul>
 *   <li><b>The value of a secret-named key</b>, matched case-insensitively, {@code -} and
 *       {@code _} alike: {@code authorization}, {@code proxy-authorization}, {@code cookie},
 *       {@code set-cookie}, {@code auth}, and any name ending in {@code token},
 *       {@code secret}, {@code password}, {@code passwd}, {@code passphrase}, {@code credential(s)},
 *       {@code apikey}/{@code api_key}, {@code access_key}, {@code private_key}, {@code secret_key},
 *       {@code signing_key} or {@code encryption_key} (so {@code access_token}, {@code id_token},
 *       {@code client_secret}, {@code apiKey}, {@code x-api-key} too). MCP's own
 *       {@code progressToken} is not a secret and stays. Names like {@code key} or
 *       {@code sort_key} alone are too common to count. {@code pwd} as a name's last word
 *       ({@code pwd}, {@code db_pwd}, {@code MYSQL_PWD}, {@code userPwd}) is short for password,
 *       as in ODBC's {@code PWD=...}, except where its value is an absolute path: then it is the
 *       working directory, as the shell's {@code PWD} is ({@code OLDPWD} and {@code PWD_DIR} do
 *       not end in the word {@code pwd} and never count); see {@link #isSecret}. The value is
 *       redacted when it is a JSON string or number, in JSON ({@code "token":"..."}), in JSON held
 *       in a JSON string ({@code "{\"token\":\"...\"}"}), in a header-like or query-like text
 *       ({@code Authorization: Bearer ...}, {@code ?access_token=...}); a credential's scheme
 *       stays out of it ({@code "Authorization":"Bearer [redacted]"}).</li>
 *   <li><b>A token-like value anywhere</b>: {@code Bearer} and {@code Basic} credentials (the
 *       scheme stays), JWTs ({@code eyJ...}), PEM private keys, passwords in URLs
 *       ({@code https://user:...@host}), and keys with well-known prefixes: {@code sk-} and
 *       {@code sk_}/{@code rk_} (OpenAI, Anthropic, Stripe), {@code ghp_}, {@code gho_},
 *       {@code ghu_}, {@code ghs_}, {@code ghr_}, {@code github_pat_} (GitHub), {@code glpat-}
 *       (GitLab), {@code xoxb-}/{@code xoxp-}/... (Slack), {@code AKIA}/{@code ASIA} (AWS),
 *       {@code AIza} (Google), {@code npm_}, {@code hf_}.</li>
 * </ul>
 *
 * <p>This is a best effort over text, not a guarantee: a secret under an innocent name with no
 * recognisable shape (a password in a {@code "note"}) is not found, and an innocent value may be
 * redacted. Where a guess is needed ({@code sk-}, {@code Bearer}, {@code Basic}), a value must
 * look random (a digit, or upper case after lower case) so that prose such as "Basic usage"
 * stays. The value of a secret-named key whose JSON string is cut off by the end of the text is
 * redacted to the end, so a secret cut short by truncation is not shown in part.
 *
 * <p>Cost: a handful of regular-expression passes over the text, linear in its length. That is
 * acceptable for a diagnostic log that is off by default and that bounds what it redacts; do not
 * put this on the path every message takes.
 */
public final class SecretRedactor {

    /** What a secret is replaced by. */
    public static final String REDACTED = "[redacted]";

    /** The fewest characters of a {@link #isDistinctive distinctive} secret. */
    public static final int DISTINCTIVE_LENGTH = 8;

    private static final Set<String> SECRET_NAMES = Set.of("authorization", "proxy_authorization", "cookie",
            "set_cookie", "auth");
    private static final String[] SECRET_SUFFIXES = {"token", "secret", "password", "passwd", "passphrase",
        "credential", "credentials", "apikey", "api_key", "accesskey", "access_key", "privatekey", "private_key",
        "secretkey", "secret_key", "signingkey", "signing_key", "encryptionkey", "encryption_key"};
    /** Named like a secret, but MCP's own and never one. */
    private static final Set<String> NOT_SECRET = Set.of("progresstoken");

    /**
     * Where a token may start: not in the middle of a word, but right after a JSON escape such as
     * {@code \n} (whose letter is a word character).
     */
    private static final String START = "(?:(?<![A-Za-z0-9_])|(?<=\\\\[nrtbf/]))";

    private static final Pattern PEM_PRIVATE_KEY = Pattern.compile(
            "-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)", Pattern.DOTALL);
    /**
     * {@code "name" :} before a value. The value itself is scanned by hand, not by the pattern:
     * a regex loop over a string's characters and escapes recurses once per step in
     * java.util.regex, and a long string would overflow the stack.
     */
    private static final Pattern JSON_NAME = Pattern.compile("\"([^\"\\\\]{1,64})\"\\s*+:\\s*+");
    /** The same inside a JSON string: {@code \"name\":} (whitespace possibly escaped too). */
    private static final Pattern ESCAPED_JSON_NAME = Pattern.compile(
            "\\\\\"([^\"\\\\]{1,64})\\\\\"(?:\\s|\\\\[nrt]){0,16}:(?:\\s|\\\\[nrt]){0,16}");
    private static final Pattern COOKIE_HEADER = Pattern.compile("(?i)(?<![\\w-])((?:set-)?cookie\\s*:\\s*)[^\"\\r\\n\\\\]+");
    /** {@code name: value} or {@code name=value} outside JSON: a header, a query string, a config line. */
    private static final Pattern TEXT_MEMBER = Pattern.compile(
            "(?<![\\w.-])([A-Za-z][\\w.-]{0,63})(\\s*[:=]\\s*)"
                    + "((?:(?i:bearer|basic|token|digest)\\s+)?+)([^\\s\"'&,;<>\\\\\\[]+)");
    /**
     * A credential with its scheme, as the value of a secret-named member: the scheme stays
     * readable and out of the placeholder, as in headers.
     */
    private static final Pattern VALUE_SCHEME = Pattern.compile("(?i)((?:bearer|basic|token|digest)\\s+)(\\S.*)");
    private static final Pattern URL_PASSWORD = Pattern.compile("(://[^/\\s:@\"'\\\\]+:)[^/\\s@\"'\\\\]+(@)");
    private static final Pattern AUTH_SCHEME = Pattern.compile(
            START + "((?i:bearer|basic)\\s+)([A-Za-z0-9._~+/=-]{8,})");
    private static final Pattern JWT = Pattern.compile(
            START + "eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}(?:\\.[A-Za-z0-9_-]*)?");
    /** Keys whose prefix alone is distinctive: no guess needed. */
    private static final Pattern PREFIXED_KEY = Pattern.compile(START + "(?:"
            + "gh[pousr]_[A-Za-z0-9]{20,}"
            + "|github_pat_[A-Za-z0-9_]{20,}"
            + "|glpat-[A-Za-z0-9_-]{20,}"
            + "|xox[abposr]-[A-Za-z0-9-]{10,}"
            + "|(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"
            + "|AIza[0-9A-Za-z_-]{35}"
            + "|npm_[A-Za-z0-9]{36}"
            + "|hf_[A-Za-z0-9]{30,}"
            + "|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,})");
    /** {@code sk-...} (OpenAI, Anthropic): redacted when the rest looks random. */
    private static final Pattern SK_KEY = Pattern.compile(START + "sk-[A-Za-z0-9_-]{16,}");

    private SecretRedactor() {
    }

    /**
     * The text with every secret it recognises replaced by {@value #REDACTED} (a credential
     * keeps its scheme: {@code Bearer [redacted]}).
     *
     * @param text any text; null gives null
     */
    public static String redact(String text) {
        return redact(text, secret -> REDACTED);
    }

    /**
     * The text with every secret it recognises replaced by what {@code placeholder} makes of it:
     * for the recorder, which gives the same secret the same placeholder throughout a cassette
     * ({@code <redacted:1>}), so that redaction keeps requests that carried it alike. The function
     * gets the secret as it stands in the text (the value alone: no quotes, no {@code Bearer }
     * scheme, no cookie header's name) and its result is put in its place as it is, so in JSON it
     * must need no escaping.
     *
     * <p>The passes run one after the other over the text as the earlier ones left it, so the
     * function may be given what it returned before, or a value holding it: the value of a
     * secret-named member that a pass before replaced ({@code "API_TOKEN": "<redacted:1>"}), or
     * that the caller replaced before calling this. Give such a value its own placeholder back,
     * or a secret gets a second one.
     *
     * @param text any text; null gives null
     */
    public static String redact(String text, UnaryOperator<String> placeholder) {
        Objects.requireNonNull(placeholder, "placeholder");
        if (text == null || text.isEmpty()) {
            return text;
        }
        String out = replace(text, PEM_PRIVATE_KEY, m -> placeholder.apply(m.group()));
        out = jsonMembers(out, JSON_NAME, false, placeholder);
        out = jsonMembers(out, ESCAPED_JSON_NAME, true, placeholder);
        out = replace(out, COOKIE_HEADER, m -> m.group(1) + placeholder.apply(m.group().substring(m.group(1).length())));
        out = textMembers(out, TEXT_MEMBER, placeholder);
        out = replace(out, URL_PASSWORD, m -> m.group(1)
                + placeholder.apply(m.group().substring(m.group(1).length(), m.group().length() - 1)) + m.group(2));
        out = replace(out, AUTH_SCHEME, m -> looksRandom(m.group(2)) ? m.group(1) + placeholder.apply(m.group(2))
                : m.group());
        out = replace(out, JWT, m -> placeholder.apply(m.group()));
        out = replace(out, PREFIXED_KEY, m -> placeholder.apply(m.group()));
        out = replace(out, SK_KEY, m -> looksRandom(m.group().substring(3)) ? placeholder.apply(m.group()) : m.group());
        return out;
    }

    /**
     * Whether a key's name says its value is a secret: see the class description.
     *
     * @param name a JSON member name, header name or parameter name
     */
    public static boolean isSecretName(String name) {
        String n = name.toLowerCase(Locale.ROOT).replace('-', '_');
        if (NOT_SECRET.contains(n)) {
            return false;
        }
        if (SECRET_NAMES.contains(n) || isPwd(name)) {
            return true;
        }
        for (String suffix : SECRET_SUFFIXES) {
            if (n.endsWith(suffix)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code value}, found under {@code name}, is a secret by its name: {@link #isSecretName},
     * except for a {@code pwd} name whose value is an absolute path ({@code /...}, {@code ~/...},
     * {@code C:\...}). {@code PWD} is ambiguous: the shell's working directory (every environment
     * dump has it) and ODBC's password keyword ({@code Server=...;Uid=sa;PWD=...}). A working
     * directory is a path and a password almost never is, so the value decides.
     *
     * @param name  a JSON member name, header name or parameter name
     * @param value its value as it stands in the text (JSON escapes and all)
     */
    public static boolean isSecret(String name, String value) {
        return isSecretName(name) && !(isPwd(name) && isAbsolutePath(value));
    }

    /**
     * Whether {@code pwd} is the name's last word: {@code pwd}, {@code db_pwd}, {@code MYSQL-PWD},
     * {@code userPwd}. Not {@code OLDPWD} (the shell's previous working directory: one word) nor
     * {@code PWD_DIR}.
     */
    private static boolean isPwd(String name) {
        int start = name.length() - 3;
        if (start < 0 || !name.regionMatches(true, start, "pwd", 0, 3)) {
            return false;
        }
        if (start == 0) {
            return true;
        }
        char before = name.charAt(start - 1);
        return before == '_' || before == '-' || before == '.'
                || Character.isLowerCase(before) && name.startsWith("Pwd", start); // camelCase: userPwd
    }

    /**
     * An absolute path, as a working directory is: {@code /...} ({@code \/...} when JSON escapes
     * the slash), {@code ~/...}, or a drive ({@code C:\...}, {@code C:/...}).
     */
    private static boolean isAbsolutePath(String value) {
        if (value.startsWith("/") || value.startsWith("\\/") || value.startsWith("~/")) {
            return true;
        }
        return value.length() >= 3 && Character.isLetter(value.charAt(0)) && value.charAt(1) == ':'
                && (value.charAt(2) == '\\' || value.charAt(2) == '/');
    }

    /**
     * Replaces group 3 (the value) of each match whose group 1 (the name) is a secret name. After
     * any other name the search goes on from its value, which may hold a name of its own
     * ({@code https://h/?token=...} is a name {@code https} with a value).
     */
    private static String textMembers(String text, Pattern pattern, UnaryOperator<String> placeholder) {
        Matcher m = pattern.matcher(text);
        StringBuilder sb = null;
        int last = 0;
        int from = 0;
        while (from < text.length() && m.find(from)) {
            if (!isSecret(m.group(1), m.group(4))) {
                from = m.start(3);
                continue;
            }
            if (sb == null) {
                sb = new StringBuilder(text.length());
            }
            // The scheme stays readable and out of the placeholder: the same token is then the same
            // placeholder after "Bearer " as on its own, as the recorder's headers have it.
            sb.append(text, last, m.start(4)).append(placeholder.apply(m.group(4)));
            last = m.end(4);
            from = last;
        }
        return sb == null ? text : sb.append(text, last, text.length()).toString();
    }

    /**
     * Redacts the string or number after each secret-named {@code "name":} (or {@code \"name\":}
     * when {@code escaped}, JSON inside a JSON string). A string cut off by the end of the text
     * is redacted to the end.
     */
    private static String jsonMembers(String text, Pattern name, boolean escaped,
                                      UnaryOperator<String> placeholder) {
        Matcher m = name.matcher(text);
        StringBuilder sb = null;
        int last = 0;
        int from = 0;
        while (from < text.length() && m.find(from)) {
            int valueStart = m.end();
            from = valueStart;
            if (!isSecretName(m.group(1))) {
                continue;
            }
            String quote = escaped ? "\\\"" : "\"";
            int valueEnd;
            String value;
            if (text.startsWith(quote, valueStart)) {
                valueEnd = escaped ? escapedStringEnd(text, valueStart + 2) : stringEnd(text, valueStart + 1);
                int contentEnd = text.startsWith(quote, valueEnd - quote.length()) && valueEnd - quote.length()
                        > valueStart ? valueEnd - quote.length() : valueEnd;
                value = text.substring(valueStart + quote.length(), contentEnd);
            } else {
                valueEnd = numberEnd(text, valueStart);
                if (valueEnd == valueStart) {
                    continue; // an object, an array, a literal: nothing to redact here
                }
                value = text.substring(valueStart, valueEnd);
            }
            if (!isSecret(m.group(1), value)) {
                continue; // a working directory under PWD: the search goes on after it
            }
            // "Bearer <redacted:1>", as in a header: the token's placeholder is the one it has elsewhere.
            Matcher scheme = VALUE_SCHEME.matcher(value);
            String redacted = scheme.matches() ? scheme.group(1) + placeholder.apply(scheme.group(2))
                    : placeholder.apply(value);
            String replacement = text.startsWith(quote, valueStart) ? quote + redacted + quote : redacted;
            if (sb == null) {
                sb = new StringBuilder(text.length());
            }
            sb.append(text, last, valueStart).append(replacement);
            last = valueEnd;
            from = valueEnd;
        }
        return sb == null ? text : sb.append(text, last, text.length()).toString();
    }

    /** Just past the closing quote of a JSON string whose content starts at {@code i}; or the text's end. */
    private static int stringEnd(String text, int i) {
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c == '"') {
                return i + 1;
            }
            i += c == '\\' ? 2 : 1;
        }
        return text.length();
    }

    /**
     * Just past the closing {@code \"} of a string inside a JSON string, whose content starts at
     * {@code i}; or where the text or the outer string ends. Two levels of escaping: the outer
     * string's escapes ({@code \\} for a backslash, {@code \"} for a quote) spell the inner
     * text, in which a backslash escapes the next character, so the inner string's own escaped
     * quote is {@code \\\"} and only a quote not so escaped ends it.
     */
    private static int escapedStringEnd(String text, int i) {
        boolean innerEscape = false;
        while (i < text.length()) {
            char c = text.charAt(i);
            char inner;
            int width;
            if (c == '\\') {
                if (i + 1 >= text.length()) {
                    return text.length();
                }
                char next = text.charAt(i + 1);
                inner = next == '"' || next == '\\' ? next : 'x'; // \n, \t, \/...: some other character
                width = 2;
            } else if (c == '"') {
                return i; // the outer string ends: the inner one was cut off
            } else {
                inner = c;
                width = 1;
            }
            if (innerEscape) {
                innerEscape = false;
            } else if (inner == '\\') {
                innerEscape = true;
            } else if (inner == '"') {
                return i + width;
            }
            i += width;
        }
        return text.length();
    }

    private static int numberEnd(String text, int i) {
        int start = i;
        if (i < text.length() && text.charAt(i) == '-') {
            i++;
        }
        if (i >= text.length() || !Character.isDigit(text.charAt(i))) {
            return start;
        }
        while (i < text.length() && "0123456789.eE+-".indexOf(text.charAt(i)) >= 0) {
            i++;
        }
        return i;
    }

    private static String replace(String text, Pattern pattern, Function<Matcher, String> replacement) {
        Matcher m = pattern.matcher(text);
        if (!m.find()) {
            return text;
        }
        StringBuilder sb = new StringBuilder(text.length());
        int last = 0;
        do {
            sb.append(text, last, m.start()).append(replacement.apply(m));
            last = m.end();
        } while (m.find());
        return sb.append(text, last, text.length()).toString();
    }

    /**
     * Whether a secret, once recognised, is distinctive enough to be looked for as it is in other
     * text, where nothing gives it away: at least {@value #DISTINCTIVE_LENGTH} characters that
     * look random (a digit, a sign of base64, or an upper-case letter right after a lower-case
     * one). A password of {@code undefined} or {@code changeme} is still redacted where it is
     * recognised, but searching for it everywhere else would blank out an ordinary word.
     *
     * @param secret a recognised secret, as {@link #redact(String, UnaryOperator)} gives it
     */
    public static boolean isDistinctive(String secret) {
        return secret.length() >= DISTINCTIVE_LENGTH && looksRandom(secret);
    }

    /** A digit, a sign of base64 ({@code + / =}), or an upper-case letter right after a lower-case one. */
    private static boolean looksRandom(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (Character.isDigit(c) || c == '+' || c == '/' || c == '=') {
                return true;
            }
            if (i > 0 && Character.isUpperCase(c) && Character.isLowerCase(value.charAt(i - 1))) {
                return true;
            }
        }
        return false;
    }
}
