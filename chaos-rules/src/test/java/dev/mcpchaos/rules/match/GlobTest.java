package dev.mcpchaos.rules.match;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class GlobTest {

    @ParameterizedTest(name = "{0} ~ {1} = {2}")
    @CsvSource({
            "tools/call, tools/call, true",
            "tools/call, tools/list, false",
            "tools/*, tools/call, true",
            "tools/*, tools/, true",
            "tools/*, tool/call, false",
            "*, anything/at/all, true",
            "*, '', true",
            "search*, search, true",
            "search*, search_docs, true",
            "search*, research, false",
            "*_v2, fetch_v2, true",
            "*_v2, fetch_v3, false",
            "s?arch, search, true",
            "s?arch, sarch, false",
            "*/*/*, a/b/c, true",
            "*/*/*, a/b, false",
            "a*b*c, axxbyyc, true",
            "a*b*c, axxbyy, false",
            "*a*a*a*a*b, aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab, true",
            "*a*a*a*a*b, aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, false",
            "notifications/*, notifications/progress, true",
            "Search, search, false",
    })
    void matchesWholeStrings(String pattern, String text, boolean expected) {
        assertThat(Glob.of(pattern).matches(text)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource({"*", "tools/call", "a*", "*a", "a?c"})
    void neverMatchesNull(String pattern) {
        assertThat(Glob.of(pattern).matches(null)).isFalse();
    }
}
