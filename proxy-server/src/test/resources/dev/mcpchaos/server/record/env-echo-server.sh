#!/bin/sh
# A stdio "server" for the redaction tests: it answers a line naming get-env with its environment
# as a tool result's text (JSON in a JSON string, as server-everything's get-env does) and sends
# every other line back as it came (as cat does), so arguments show up in both directions.
while IFS= read -r line; do
  case "$line" in
    *'"get-env"'*)
      id=${line#*'"id":'}
      id=${id%%,*}
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"{\\n  \\"API_TOKEN\\": \\"%s\\",\\n  \\"OLDPWD\\": \\"%s\\",\\n  \\"PWD\\": \\"%s\\"\\n}"}]}}\n' \
        "$id" "$API_TOKEN" "$OLDPWD" "$PWD"
      ;;
    *)
      printf '%s\n' "$line"
      ;;
  esac
done
