package dev.mcpchaos.core.codec.jsonrpc;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.async.ByteArrayFeeder;
import dev.mcpchaos.core.frame.Envelope;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;

import java.io.IOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

/**
 * Pulls the JSON-RPC envelope ({@code jsonrpc}, {@code id}, {@code method}, {@code params.name},
 * whether {@code result} or {@code error} is present) out of one message, in one incremental pass
 * over jackson-core's non-blocking parser. No tree is built and nothing else is kept.
 *
 * <p>Usage: {@link #sniff(ByteBuf)} (or {@link #sniff(byte[], int, int)}) for a message that is
 * whole in memory, or {@link #feed(ByteBuf)} any number of times followed by {@link #finish()} for
 * one that arrives in pieces (an HTTP body). The bytes may be split anywhere, even inside a UTF-8
 * sequence.
 *
 * <p>A whole message first goes through {@link FastEnvelopeScanner}, a hand-written pass that
 * checks the JSON and skips what the envelope does not need without decoding it, several times
 * faster than the parser. Whatever it is not sure of (every malformed message among others) it
 * leaves to the parser, so both ways give the same envelope, malformed reasons included.
 *
 * <p>Malformed input is a result, never an exception: the envelope is
 * {@link dev.mcpchaos.core.frame.MessageKind#MALFORMED} with a reason. Whitespace-only input is
 * {@link dev.mcpchaos.core.frame.MessageKind#BLANK}.
 *
 * <p>One instance serves one stream of messages and is not thread-safe. It keeps its parser from
 * one message to the next while messages end cleanly, so the common path allocates little more
 * than the strings it returns. No limits on string length, nesting or number length are applied
 * here: the framer in front of it bounds the size of a message.
 */
public final class EnvelopeSniffer {

    /** Which top-level member the next value belongs to. */
    private enum Member { NONE, JSONRPC, ID, METHOD, RESULT, ERROR, PARAMS, PARAMS_NAME }

    /**
     * A whole message in a direct or composite buffer up to this size is copied into an array for
     * the fast path (a copy is far cheaper than parsing); a larger one goes to the parser in 8 KiB
     * pieces.
     */
    private static final int MAX_FAST_COPY = 1024 * 1024;

    /**
     * That array: one per thread, not per sniffer, because a proxy holds a sniffer per stream
     * (thousands of SSE streams) but runs them on a few event-loop threads. It grows to the
     * largest message copied on the thread, at most {@link #MAX_FAST_COPY}.
     */
    private static final FastThreadLocal<byte[]> FAST_COPY = new FastThreadLocal<>() {
        @Override
        protected byte[] initialValue() {
            return new byte[8192];
        }
    };

    private JsonParser parser;
    private final TextCache texts = new TextCache();
    private final FastEnvelopeScanner scanner; // null: the parser only (the reference for tests)
    private byte[] scratch = new byte[0];
    private boolean midMessage; // something of the current message was fed

    // State of the message being sniffed.
    private int depth;
    private boolean started;
    private boolean complete;
    private boolean scalarRoot;
    private boolean checkedTrailing;
    private boolean sawContent;
    private byte lastContent; // the last non-blank byte of the earlier pieces of this message
    private boolean batch;
    private String failure;
    private final List<Envelope> batchElements = new ArrayList<>();

    // State of the object being captured (the root object, or the current element of a batch).
    private int objectDepth; // depth at which the captured object's members sit; 0 when none
    private Member pending = Member.NONE;
    private final EnvelopeMembers members = new EnvelopeMembers();
    private boolean inParams;

    public EnvelopeSniffer() {
        this(true);
    }

    /** {@code fastPath} false: every message goes through the parser, as the tests' reference. */
    EnvelopeSniffer(boolean fastPath) {
        scanner = fastPath ? new FastEnvelopeScanner(texts) : null;
    }

    /**
     * Sniffs one whole message. Equivalent to {@code feed(message)} then {@code finish()}. Does not
     * change the buffer's indexes.
     */
    public Envelope sniff(ByteBuf message) {
        if (scanner != null && !midMessage) {
            int length = message.readableBytes();
            Envelope envelope = null;
            if (message.hasArray()) {
                int start = message.arrayOffset() + message.readerIndex();
                envelope = scanner.scan(message.array(), start, start + length);
            } else if (length <= MAX_FAST_COPY) {
                byte[] copy = FAST_COPY.get();
                if (copy.length < length) {
                    copy = new byte[Math.min(MAX_FAST_COPY, Math.max(length, copy.length * 2))];
                    FAST_COPY.set(copy);
                }
                message.getBytes(message.readerIndex(), copy, 0, length);
                envelope = scanner.scan(copy, 0, length);
            }
            if (envelope != null) {
                return envelope;
            }
        }
        feed(message);
        return finish();
    }

    /** Sniffs the whole message {@code bytes[start, end)}. Equivalent to {@code feed} then {@code finish()}. */
    public Envelope sniff(byte[] bytes, int start, int end) {
        if (scanner != null && !midMessage) {
            Envelope envelope = scanner.scan(bytes, start, end);
            if (envelope != null) {
                return envelope;
            }
        }
        feed(bytes, start, end);
        return finish();
    }

    /** Feeds the next piece of the current message. Does not change the buffer's indexes. */
    public void feed(ByteBuf piece) {
        if (failure != null || !piece.isReadable()) {
            return;
        }
        midMessage = true;
        if (piece.hasArray()) {
            int start = piece.arrayOffset() + piece.readerIndex();
            feed(piece.array(), start, start + piece.readableBytes());
        } else {
            // Direct or composite buffer: copy through a bounded scratch array.
            int index = piece.readerIndex();
            int end = piece.writerIndex();
            while (index < end && failure == null) {
                int n = Math.min(end - index, 8192);
                if (scratch.length < n) {
                    scratch = new byte[8192];
                }
                piece.getBytes(index, scratch, 0, n);
                feed(scratch, 0, n);
                index += n;
            }
        }
    }

    /** Feeds {@code bytes[start, end)} of the current message. */
    public void feed(byte[] bytes, int start, int end) {
        if (failure != null || start >= end) {
            return;
        }
        midMessage = true;
        if (!sawContent) {
            sawContent = indexOfContent(bytes, start, end) >= 0;
        }
        if (complete) {
            rejectTrailing(bytes, start, end);
            return;
        }
        try {
            if (parser == null) {
                parser = UnlimitedJson.FACTORY.createNonBlockingByteArrayParser();
            }
            ((ByteArrayFeeder) parser.getNonBlockingInputFeeder()).feedInput(bytes, start, end);
            // Where this piece starts in the parser's input, to find the root's end in it below.
            long pieceOffset = parser.currentLocation().getByteOffset();
            JsonToken token;
            while ((token = parser.nextToken()) != JsonToken.NOT_AVAILABLE && token != null) {
                if (token == JsonToken.END_OBJECT || token == JsonToken.END_ARRAY) {
                    String gap = separatorBeforeClose(bytes, start, pieceOffset, token);
                    if (gap != null) {
                        fail(gap);
                        return;
                    }
                }
                onToken(token);
                if (failure != null) {
                    return;
                }
                if (complete && !checkedTrailing) {
                    // Whatever follows the root in this piece must be whitespace. A token there
                    // would fail below, but a trailing number, literal or unterminated string the
                    // parser holds back, waiting for more, so scan the bytes after the root's
                    // closing one (the parser's location is just past it). Looking only at the
                    // piece's last byte would let a trailing "text} through.
                    checkedTrailing = true;
                    long rootEnd = parser.currentLocation().getByteOffset();
                    if (indexOfContent(bytes, start + (int) (rootEnd - pieceOffset), end) >= 0) {
                        fail("unexpected data after the end of the JSON value");
                        return;
                    }
                }
            }
        } catch (JsonProcessingException e) {
            fail(e.getOriginalMessage());
            return;
        } catch (IOException e) {
            fail(String.valueOf(e.getMessage()));
            return;
        }
        for (int i = end - 1; i >= start; i--) {
            if (bytes[i] != ' ' && bytes[i] != '\t' && bytes[i] != '\r' && bytes[i] != '\n') {
                lastContent = bytes[i];
                break;
            }
        }
    }

    /**
     * jackson-core's non-blocking parser (2.23) rejects {@code {"a":1,}} and {@code {"a":}} in one
     * piece but accepts them when the input is cut between the separator and the '}' (fuzzing
     * findings F4 and F8). Catches those cases, and the same for ']' after a comma: the closing
     * byte is the first non-blank byte of this piece and the earlier pieces end with a comma or a
     * colon (structural: inside a string, the close would not be a token).
     *
     * @return the failure's reason, or null when nothing is missing before the close
     */
    private String separatorBeforeClose(byte[] bytes, int start, long pieceOffset, JsonToken close) {
        if (lastContent != ',' && lastContent != ':') {
            return null;
        }
        int at = start + (int) (parser.currentLocation().getByteOffset() - 1 - pieceOffset);
        if (indexOfContent(bytes, start, at) >= 0) {
            return null;
        }
        char closing = close == JsonToken.END_OBJECT ? '}' : ']';
        if (lastContent == ':') {
            return "unexpected '" + closing + "' after a colon: expected a value";
        }
        return "unexpected '" + closing + "' after a comma: expected "
                + (close == JsonToken.END_OBJECT ? "a member name" : "a value");
    }

    private void rejectTrailing(byte[] bytes, int from, int end) {
        if (indexOfContent(bytes, from, end) >= 0) {
            fail("unexpected data after the end of the JSON value");
        }
    }

    private static int indexOfContent(byte[] bytes, int from, int end) {
        for (int i = from; i < end; i++) {
            byte b = bytes[i];
            if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
                return i;
            }
        }
        return -1;
    }

    /** Ends the current message and returns its envelope; the sniffer is then ready for the next. */
    public Envelope finish() {
        Envelope result;
        if (failure != null) {
            result = Envelope.malformed(failure);
        } else if (!started) {
            result = sawContent ? finishScalarRoot() : Envelope.blank();
        } else if (!complete) {
            result = Envelope.malformed("unexpected end of message inside a JSON "
                    + (batch ? "array" : "object"));
            discardParser();
        } else if (scalarRoot) {
            result = finishScalarRoot();
        } else if (batch) {
            result = Envelope.ofBatch(batchElements);
        } else {
            result = members.envelope();
        }
        resetMessage();
        return result;
    }

    private void onToken(JsonToken token) throws IOException {
        if (complete) {
            fail("unexpected data after the end of the JSON value: " + describe(token));
            return;
        }
        switch (token) {
            case START_OBJECT:
                depth++;
                if (!started) {
                    started = true;
                    beginObject(1);
                } else if (batch && depth == 2) {
                    beginObject(2);
                } else {
                    onStructValue();
                    if (pendingWasParams(depth)) {
                        inParams = true;
                    }
                }
                break;
            case START_ARRAY:
                depth++;
                if (!started) {
                    started = true;
                    batch = true;
                } else if (batch && depth == 2) {
                    batchElements.add(Envelope.ofOther());
                } else {
                    onStructValue();
                }
                break;
            case END_OBJECT:
                if (objectDepth != 0 && depth == objectDepth) {
                    if (batch) {
                        batchElements.add(members.envelope());
                    }
                    objectDepth = batch ? 0 : objectDepth;
                } else if (inParams && depth == objectDepth + 1) {
                    inParams = false;
                }
                depth--;
                completeIfRoot();
                break;
            case END_ARRAY:
                depth--;
                completeIfRoot();
                break;
            case FIELD_NAME:
                onFieldName(parser.currentName());
                break;
            default:
                onScalar(token);
                break;
        }
    }

    private void beginObject(int membersDepth) {
        objectDepth = membersDepth;
        pending = Member.NONE;
        members.clear();
        inParams = false;
    }

    private void onFieldName(String name) {
        if (objectDepth != 0 && depth == objectDepth) {
            switch (name) {
                case "jsonrpc": pending = Member.JSONRPC; break;
                case "id": pending = Member.ID; break;
                case "method": pending = Member.METHOD; break;
                case "result": pending = Member.RESULT; break;
                case "error": pending = Member.ERROR; break;
                case "params": pending = Member.PARAMS; break;
                default: pending = Member.NONE; break;
            }
        } else if (inParams && depth == objectDepth + 1) {
            pending = "name".equals(name) ? Member.PARAMS_NAME : Member.NONE;
        }
    }

    /** A container started as a member value: it can only be result, error or params. */
    private void onStructValue() {
        if (objectDepth == 0 || depth != objectDepth + 1) {
            return;
        }
        if (pending == Member.RESULT) {
            members.hasResult = true;
        } else if (pending == Member.ERROR) {
            members.hasError = true;
        } else if (pending == Member.ID) {
            members.hasId = true; // an object or array id is not valid JSON-RPC; keep it visible as "present"
        }
    }

    private boolean pendingWasParams(int currentDepth) {
        boolean params = pending == Member.PARAMS && objectDepth != 0 && currentDepth == objectDepth + 1;
        pending = Member.NONE;
        return params;
    }

    private void onScalar(JsonToken token) throws IOException {
        if (!started) {
            // A bare string or literal at the root: well-formed, but not a message.
            started = true;
            complete = true;
            scalarRoot = true;
            checkedTrailing = true; // judged at finish(), where the parser is dropped
            return;
        }
        if (batch && depth == 1) {
            batchElements.add(Envelope.ofOther());
            return;
        }
        if (objectDepth != 0 && depth == objectDepth) {
            switch (pending) {
                case JSONRPC:
                    members.jsonrpc = token == JsonToken.VALUE_STRING ? cachedText() : null;
                    break;
                case ID:
                    members.hasId = true;
                    members.id = idValue(token);
                    break;
                case METHOD:
                    members.method = token == JsonToken.VALUE_STRING ? cachedText() : null;
                    break;
                case RESULT:
                    members.hasResult = true;
                    break;
                case ERROR:
                    members.hasError = true;
                    break;
                default:
                    break;
            }
            pending = Member.NONE;
        } else if (inParams && depth == objectDepth + 1) {
            if (pending == Member.PARAMS_NAME && token == JsonToken.VALUE_STRING) {
                members.paramsName = cachedText();
            }
            pending = Member.NONE;
        }
    }

    /** The current string value, from the text cache. */
    private String cachedText() throws IOException {
        return texts.of(parser.getTextCharacters(), parser.getTextOffset(), parser.getTextLength());
    }

    private Object idValue(JsonToken token) throws IOException {
        switch (token) {
            case VALUE_STRING:
                return parser.getText();
            case VALUE_NUMBER_INT:
                if (parser.getNumberType() == JsonParser.NumberType.INT
                        || parser.getNumberType() == JsonParser.NumberType.LONG) {
                    return parser.getLongValue();
                }
                return new BigDecimal(parser.getText());
            case VALUE_NUMBER_FLOAT:
                return decimal(parser.getText());
            default:
                return null;
        }
    }

    /**
     * A fractional id as a BigDecimal; null (present, no value) when its exponent is beyond what
     * a BigDecimal holds, such as {@code 1e9999999999}: well-formed JSON, so no exception.
     */
    private static BigDecimal decimal(String number) {
        try {
            return new BigDecimal(number);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private void completeIfRoot() {
        if (depth == 0) {
            complete = true;
        }
    }

    /**
     * A root number such as {@code 42} cannot be told complete until the input ends: the parser
     * may still be waiting for more digits. Ending the input settles it, and costs the parser.
     */
    private Envelope finishScalarRoot() {
        if (parser == null) {
            return Envelope.malformed("malformed JSON");
        }
        try {
            ((ByteArrayFeeder) parser.getNonBlockingInputFeeder()).endOfInput();
            // A string or literal root was already read while feeding (scalarRoot); a number
            // root is read only now. Either way, nothing may follow it.
            boolean rootRead = scalarRoot || parser.nextToken() != null;
            JsonToken after = rootRead ? parser.nextToken() : null;
            discardParser();
            if (!rootRead) {
                return Envelope.malformed("malformed JSON");
            }
            return after == null ? Envelope.ofOther() : Envelope.malformed("more than one JSON value");
        } catch (JsonProcessingException e) {
            discardParser();
            return Envelope.malformed(e.getOriginalMessage());
        } catch (IOException e) {
            discardParser();
            return Envelope.malformed(String.valueOf(e.getMessage()));
        }
    }

    private void fail(String reason) {
        failure = reason == null ? "malformed JSON" : reason;
        discardParser();
    }

    private void discardParser() {
        if (parser != null) {
            try {
                parser.close();
            } catch (IOException ignored) {
                // closing an in-memory parser does not fail
            }
            parser = null;
        }
    }

    private void resetMessage() {
        if (started && !complete) {
            discardParser();
        }
        midMessage = false;
        depth = 0;
        started = false;
        complete = false;
        scalarRoot = false;
        checkedTrailing = false;
        sawContent = false;
        lastContent = 0;
        batch = false;
        failure = null;
        if (!batchElements.isEmpty()) {
            batchElements.clear();
        }
        beginObject(0);
    }

    private static String describe(JsonToken token) {
        return token.asString() != null ? "'" + token.asString() + "'" : token.name().toLowerCase();
    }
}
