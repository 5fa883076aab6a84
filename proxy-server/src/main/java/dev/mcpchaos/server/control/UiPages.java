package dev.mcpchaos.server.control;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The live page of the control endpoint: {@code GET /ui} (redirected to {@code /ui/}) and its
 * assets, {@code /ui/app.js} and {@code /ui/app.css}, read once from the jar
 * ({@code dev/mcpchaos/server/control/ui/}). The reference is {@code docs/ui.md}.
 *
 * <p>These files are served <b>without the control token</b>, even when the proxy has one: a
 * browser cannot put a bearer token on a navigation, and the files are the same static text for
 * everyone, holding nothing of the proxy (no rule, no message, no token). Everything the page
 * shows it asks of the control API with {@code fetch}, and those requests carry the token: when
 * one is answered 401, the page asks for the token and keeps it in the tab's
 * {@code sessionStorage}.
 *
 * <p>The page loads nothing from any other host (no CDN, no font); its
 * {@code Content-Security-Policy} says so to the browser too ({@code default-src 'self'}).
 */
final class UiPages {

    /** The page's path; {@code /ui/} and the asset paths below it are served too. */
    static final String PATH = "/ui";

    private static final String CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; "
            + "script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'";

    private record Asset(String contentType, byte[] bytes) {
    }

    private static final Map<String, Asset> ASSETS = Map.of(
            "/ui/", load("index.html", "text/html; charset=utf-8"),
            "/ui/app.js", load("app.js", "text/javascript; charset=utf-8"),
            "/ui/app.css", load("app.css", "text/css; charset=utf-8"));

    private UiPages() {
    }

    private static Asset load(String name, String contentType) {
        try (InputStream in = UiPages.class.getResourceAsStream("ui/" + name)) {
            if (in == null) {
                throw new IllegalStateException("ui/" + name + " is missing from the jar (expected next to "
                        + UiPages.class.getName() + ")");
            }
            return new Asset(contentType, in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The text of one of the page's files ({@code index.html}, {@code app.js}, {@code app.css}), for {@link HtmlReport}. */
    static String text(String name) {
        return new String(load(name, "").bytes, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** Whether {@code path} is the page's or one of its assets' (so served without the token). */
    static boolean serves(String method, String path) {
        return ("GET".equals(method) || "HEAD".equals(method)) && (PATH.equals(path) || ASSETS.containsKey(path));
    }

    /**
     * The answer to a {@code GET} or {@code HEAD} of a path {@link #serves} is true of:
     * {@code /ui} is sent to {@code /ui/} (so that the page's relative URLs, which the control
     * API's own paths are, work behind a path prefix too), the others are their file.
     */
    static FullHttpResponse response(String path, boolean head) {
        if (PATH.equals(path)) {
            FullHttpResponse redirect = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                    HttpResponseStatus.PERMANENT_REDIRECT, Unpooled.EMPTY_BUFFER);
            redirect.headers().set(HttpHeaderNames.LOCATION, "ui/").setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
            return redirect;
        }
        Asset asset = ASSETS.get(path);
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                head ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(asset.bytes));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, asset.contentType)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, asset.bytes.length)
                .set(HttpHeaderNames.CACHE_CONTROL, "no-cache")
                .set(HttpHeaderNames.CONTENT_SECURITY_POLICY, CSP)
                .set("X-Content-Type-Options", "nosniff")
                .set("Referrer-Policy", "no-referrer");
        return response;
    }
}
