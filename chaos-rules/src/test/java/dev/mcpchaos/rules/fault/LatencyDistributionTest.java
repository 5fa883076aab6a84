package dev.mcpchaos.rules.fault;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The shapes of the latency distributions, over many draws from a fixed seed. */
class LatencyDistributionTest {

    private static long[] draws(LatencyFault.Distribution distribution, long latencyMs, long jitterMs) {
        LatencyFault fault = new LatencyFault(new LatencyFault.Config(Duration.ofMillis(latencyMs),
                Duration.ofMillis(jitterMs), distribution));
        SplittableRandom random = new SplittableRandom(123);
        long[] ms = new long[20_000];
        for (int i = 0; i < ms.length; i++) {
            ms[i] = fault.draw(random).toMillis();
        }
        return ms;
    }

    @Test
    void fixedIsAlwaysTheLatency() {
        assertThat(draws(LatencyFault.Distribution.FIXED, 250, 0)).containsOnly(250L);
    }

    @Test
    void uniformSpreadsEvenlyAroundTheLatency() {
        long[] ms = draws(LatencyFault.Distribution.UNIFORM, 500, 100);
        assertThat(Arrays.stream(ms).min().orElseThrow()).isBetween(400L, 405L);
        assertThat(Arrays.stream(ms).max().orElseThrow()).isBetween(595L, 600L);
        assertThat(Arrays.stream(ms).average().orElseThrow()).isCloseTo(500, within(3.0));
    }

    @Test
    void normalHasTheJitterAsStandardDeviation() {
        long[] ms = draws(LatencyFault.Distribution.NORMAL, 500, 100);
        double mean = Arrays.stream(ms).average().orElseThrow();
        double sd = Math.sqrt(Arrays.stream(ms).mapToDouble(v -> (v - mean) * (v - mean)).average().orElseThrow());
        assertThat(mean).isCloseTo(500, within(5.0));
        assertThat(sd).isCloseTo(100, within(5.0));
        assertThat(Arrays.stream(ms).min().orElseThrow()).isGreaterThanOrEqualTo(0);
        assertThat(Arrays.stream(ms).max().orElseThrow()).isLessThanOrEqualTo(1500);
    }

    @Test
    void lognormalHasTheLatencyAsMedianAndALongRightTail() {
        long[] ms = draws(LatencyFault.Distribution.LOGNORMAL, 200, 200);
        long[] sorted = ms.clone();
        Arrays.sort(sorted);
        assertThat(sorted[sorted.length / 2]).isBetween(190L, 210L);
        double mean = Arrays.stream(ms).average().orElseThrow();
        assertThat(mean).isGreaterThan(sorted[sorted.length / 2]); // skewed right
        assertThat(sorted[0]).isGreaterThanOrEqualTo(0);
        assertThat(sorted[sorted.length - 1]).isLessThanOrEqualTo(200 + 10 * 200);
    }

    @Test
    void normalNeverGoesBelowZero() {
        assertThat(Arrays.stream(draws(LatencyFault.Distribution.NORMAL, 10, 100)).min().orElseThrow()).isZero();
    }
}
