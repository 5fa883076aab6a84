package dev.mcpchaos.rules;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mcpchaos.rules.internal.Text;

/** A rule as JSON in the rule file's format: what the control API shows. */
final class RuleJson {

    static final ObjectMapper MAPPER = JsonMapper.builder().build();

    private RuleJson() {
    }

    /** The rule as written, or, for a rule built in code, its settings and its fault's type. */
    static ObjectNode of(Rule rule) {
        ObjectNode written = rule.definition();
        if (written != null) {
            return written;
        }
        ObjectNode node = MAPPER.createObjectNode();
        node.put("name", rule.name());
        node.put("enabled", rule.enabled());
        node.put("probability", rule.probability());
        node.put("after", rule.after());
        rule.times().ifPresent(times -> node.put("times", times));
        node.put("start", Text.duration(rule.start()));
        rule.duration().ifPresent(duration -> node.put("duration", Text.duration(duration)));
        node.putObject("fault").put("type", rule.fault().type());
        node.put("built_in_code", true); // its match and fault parameters are Java objects, not text
        return node;
    }
}
