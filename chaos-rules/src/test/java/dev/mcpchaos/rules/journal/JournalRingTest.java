package dev.mcpchaos.rules.journal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JournalRingTest {

    @Test
    void keepsTheNewestAndCountsWhatItDropped() {
        Entries entries = new Entries(3);
        for (int i = 1; i <= 5; i++) {
            assertThat(entries.toolCall("s", i, "t", "{}")).isEqualTo(i);
        }
        JournalSnapshot snapshot = entries.ring().snapshot();
        assertThat(snapshot.entries()).extracting(JournalEntry::sequence).containsExactly(3L, 4L, 5L);
        assertThat(snapshot.evicted()).isEqualTo(2);
        assertThat(snapshot.next()).isEqualTo(6);
        assertThat(snapshot.capacity()).isEqualTo(3);
        assertThat(entries.ring().since(4).entries()).extracting(JournalEntry::sequence).containsExactly(5L);
        assertThat(entries.ring().update(2, JournalEntry::withDelivered)).as("evicted").isFalse();
        assertThat(entries.ring().update(4, JournalEntry::withDelivered)).isTrue();
        assertThat(entries.ring().entries().get(1).delivered()).isTrue();
    }

    @Test
    void clearForgetsButNumberingGoesOn() {
        Entries entries = new Entries(2);
        entries.toolCall("s", 1, "t", "{}");
        entries.toolCall("s", 2, "t", "{}");
        entries.toolCall("s", 3, "t", "{}");
        entries.ring().clear();
        assertThat(entries.ring().entries()).isEmpty();
        assertThat(entries.ring().snapshot().evicted()).isZero();
        assertThat(entries.ring().update(3, JournalEntry::withDelivered)).isFalse();
        assertThat(entries.toolCall("s", 4, "t", "{}")).isEqualTo(4);
        assertThat(entries.ring().filter(Messages.toolCall("t"))).extracting(JournalEntry::id).containsExactly(4L);
    }

    @Test
    void updateNewestChangesOnlyTheNewestMatchStillHeld() {
        Entries entries = new Entries(3);
        entries.toolCall("s", 1, "t", "{}");
        entries.toolCall("s", 1, "t", "{}");
        entries.toolCall("s", 1, "t", "{}");
        entries.toolCall("s", 2, "t", "{}"); // evicts the first
        assertThat(entries.ring().updateNewest(e -> Long.valueOf(1).equals(e.id()), JournalEntry::withDelivered))
                .isTrue();
        assertThat(entries.ring().entries()).extracting(JournalEntry::sequence, JournalEntry::delivered)
                .containsExactly(tuple(2L, false), tuple(3L, true), tuple(4L, false));
        assertThat(entries.ring().updateNewest(e -> Long.valueOf(9).equals(e.id()), JournalEntry::withDelivered))
                .as("no entry matches").isFalse();
    }

    @Test
    void refusesACapacityBelowOne() {
        assertThatThrownBy(() -> new JournalRing(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("journal capacity: 0 (expected: >= 1)");
    }
}
