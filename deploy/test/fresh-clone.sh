#!/usr/bin/env bash
# Acceptance of issue #16: the repository, as committed (HEAD), cloned into an empty temporary directory with no
# sibling directory (no shared data or anything else) beside it, runs the README's two commands:
#   npm install && npx passk demo     (the README's main command; it ends by serving the dashboard, so it runs in the
#                                      background until it prints the dashboard URL, the URL is fetched, and it is
#                                      stopped with SIGTERM, as Ctrl-C would)
#   npm install && npm test           (the full suite, in the clone; its last line is `N passed, M failed`)
# Ends with one plain line `N passed, M failed, K skipped`: the clone's test counts, plus one for the demo command (and
# one failure for any step that could not run). Exit 0 only if everything passed.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/passk-fresh-clone.XXXXXX")"
clone="$work/passk"
demo_pid=""
cleanup() {
  [ -n "$demo_pid" ] && kill -- "-$demo_pid" 2>/dev/null
  # the clone's own Kafka stack, if its tests left one up
  [ -x "$clone/deploy/local/down.sh" ] && [ -d "$clone/.local-stack" ] && bash "$clone/deploy/local/down.sh" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
skipped=0
say() { echo "fresh-clone: $*" >&2; }
end() { echo "$passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit $?; }

git clone -q "$root" "$clone" || { say "git clone failed"; failed=$((failed + 1)); end; }
ls -A "$work" | grep -qvx passk && { say "the clone's parent is not empty"; failed=$((failed + 1)); end; }
say "cloned $(git -C "$clone" rev-parse --short HEAD) into $clone (nothing beside it)"
cd "$clone" || end

# 1. npm install && npx passk demo
out="$work/demo.out"
if npm install --no-audit --no-fund --loglevel=error >&2; then
  # in a session of its own, so stopping it stops npx and the node process under it (a kill of npx alone can
  # leave the demo serving, holding its port)
  setsid npx passk demo >"$out" 2>"$work/demo.err" &
  demo_pid=$!
  url=""
  for _ in $(seq 1 600); do
    # the demo's own words, without colour codes (picocolors colours output when CI is set, even into a file)
    sed 's/\x1b\[[0-9;]*m//g' "$out" >"$out.plain" 2>/dev/null
    url="$(grep -o 'Dashboard: http://[^ ]*' "$out.plain" 2>/dev/null | head -1 | cut -d' ' -f2)"
    [ -n "$url" ] && break
    kill -0 "$demo_pid" 2>/dev/null || break
    sleep 1
  done
  if [ -n "$url" ] && curl -fsS -o /dev/null "$url" && grep -q 'Gate: FAIL' "$out.plain"; then
    say "npx passk demo ran, printed the gate and served $url"
    passed=$((passed + 1))
  else
    say "npx passk demo failed (no dashboard URL, or it did not answer):"
    tail -n 20 "$out" "$work/demo.err" >&2
    failed=$((failed + 1))
  fi
  kill -TERM -- "-$demo_pid" 2>/dev/null
  wait "$demo_pid" 2>/dev/null
  demo_pid=""
else
  say "npm install failed"
  failed=$((failed + 1))
fi

# 2. npm install && npm test
test_out="$work/test.out"
if npm install --no-audit --no-fund --loglevel=error >&2; then
  npm test 2>&1 | tee "$test_out" >&2
  line="$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$test_out" | tail -1)"
  if [ -n "$line" ]; then
    read -r p f k <<<"$(echo "$line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$/\1 \2 \4/')"
    passed=$((passed + p))
    failed=$((failed + f))
    skipped=$((skipped + ${k:-0}))
  else
    say "npm test printed no 'N passed, M failed' line"
    failed=$((failed + 1))
  fi
else
  say "npm install failed"
  failed=$((failed + 1))
fi
end
