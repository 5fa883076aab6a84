package dev.mcpchaos.server.control;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mcpchaos.server.check.Referee;
import dev.mcpchaos.server.testing.CatProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The live page's files on the control endpoint ({@link UiPages}) and {@code GET /check}: the
 * files are served without the token, and nothing else is; they name no other host. What the
 * page does in a browser is {@code LivePageIT}'s.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LivePageServingTest {

    private static final String TOKEN = "t0ken-sEcret";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern ANOTHER_HOST = Pattern.compile("(?i)(https?:)?//[a-z0-9.-]+\\.[a-z]{2,}|@import|url\\(");

    private CatProxy cat;

    @AfterEach
    void close() {
        if (cat != null) {
            cat.close();
        }
    }

    @Test
    void thePageAndItsAssetsAreServedWithoutTheTokenAndTheApiStillAsksForIt() throws Exception {
        cat = CatProxy.withControl(null, TOKEN);
        HttpResponse<String> redirect = cat.get("/ui");
        assertThat(redirect.statusCode()).isEqualTo(308);
        assertThat(redirect.headers().firstValue("Location")).hasValue("ui/");

        HttpResponse<String> page = cat.get("/ui/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
        assertThat(page.headers().firstValue("Content-Security-Policy").orElseThrow())
                .contains("default-src 'self'").contains("connect-src 'self'");
        assertThat(page.body()).contains("<script src=\"app.js\"").contains("href=\"app.css\"");

        HttpResponse<String> script = cat.get("/ui/app.js");
        assertThat(script.statusCode()).isEqualTo(200);
        assertThat(script.headers().firstValue("Content-Type")).hasValue("text/javascript; charset=utf-8");
        assertThat(script.body()).contains("sessionStorage").contains("Authorization");
        assertThat(cat.get("/ui/app.css").headers().firstValue("Content-Type")).hasValue("text/css; charset=utf-8");

        HttpResponse<String> head = cat.request("HEAD", "/ui/app.js", null);
        assertThat(head.statusCode()).isEqualTo(200);
        assertThat(head.body()).isEmpty();
        assertThat(head.headers().firstValue("Content-Length")).hasValue(Integer.toString(script.body().getBytes(
                java.nio.charset.StandardCharsets.UTF_8).length));

        // Only these files: the API, another path under /ui, and a POST still need the token.
        for (String path : List.of("/status", "/rules", "/events", "/journal", "/check", "/ui/secret", "/uix")) {
            assertThat(cat.get(path).statusCode()).as(path).isEqualTo(401);
        }
        assertThat(cat.request("POST", "/ui/", "x").statusCode()).isEqualTo(401);
        assertThat(cat.request("GET", "/status", null, "Authorization", "Bearer " + TOKEN).statusCode()).isEqualTo(200);
    }

    @Test
    void thePageLoadsNothingFromAnotherHost() throws Exception {
        cat = CatProxy.withControl(null, null);
        for (String path : List.of("/ui/", "/ui/app.js", "/ui/app.css")) {
            String body = cat.get(path).body();
            assertThat(ANOTHER_HOST.matcher(body).find()).as("%s names another host or imports: %s", path,
                    ANOTHER_HOST.matcher(body).results().map(m -> m.group()).toList()).isFalse();
        }
    }

    @Test
    void checkServesTheRefereesReportSoFarOr404WithoutAReferee() throws Exception {
        cat = CatProxy.withControl(null, null);
        HttpResponse<String> none = cat.get("/check");
        assertThat(none.statusCode()).isEqualTo(404);
        assertThat(none.body()).contains("this proxy runs no referee");
        cat.close();

        cat = new CatProxy(b -> b.control(new InetSocketAddress("127.0.0.1", 0)).check(new Referee()));
        cat.send(CatProxy.call(1, "x"));
        await().atMost(Duration.ofSeconds(10)).until(() -> JSON.readTree(cat.get("/check").body())
                .path("messages").asLong() > 0);
        JsonNode report = JSON.readTree(cat.get("/check").body());
        assertThat(report.path("checks").isArray()).isTrue();
        assertThat(report.path("checks").get(0).has("status")).isTrue();
    }
}
