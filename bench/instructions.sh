#!/usr/bin/env bash
# Instructions per request of a bench server, counted by valgrind (user space, every thread): unlike req/s and CPU
# time, the count does not move with the load of a shared machine, so two versions of the code can be compared on
# one that is never quiet (bench/README.md, "Instructions per request").
#
#   bash bench/instructions.sh eas.ts session       # getProperty with the session cookie of one login
#   bash bench/instructions.sh eas.ts apikey        # the same with MAXADMIN's API key
#   bash bench/instructions.sh bare-static.ts       # the bare Fastify route of the same answer
#
# Needs valgrind (apt-get install -y valgrind) and the benchmark schema (any `npm run bench -- session` builds it).
# WARM requests (default 10000) run uninstrumented first, then COUNT (default 5000) are counted.
set -euo pipefail
cd "$(dirname "$0")/.."
server=${1:?"usage: bash bench/instructions.sh <server, e.g. eas.ts> [session|apikey]"}
credentials=${2:-}
warm=${WARM:-10000}
count=${COUNT:-5000}
out=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$out"' EXIT

npx tsc -p bench/tsconfig.servers.json
export BENCH_DATABASE_URL=${BENCH_DATABASE_URL:-postgres://root@127.0.0.1:5432/test}
export BENCH_SCHEMA=${BENCH_SCHEMA:-eas_bench}
export BENCH_ROUTE=/maximo/oslc/service/system BENCH_BODY='{"return":"1000"}'
path='/maximo/oslc/service/system?action=wsmethod:getProperty&propName=mxe.oslc.maxpagesize'
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/callgrind.%p" \
  node ".cache/bench/bench/servers/${server%.ts}.js" >"$out/server.log" 2>&1 &
pid=$!
port=
for _ in $(seq 1 600); do
  port=$(grep -o 'listening on port [0-9]*' "$out/server.log" | awk '{print $4}' || true)
  [ -n "$port" ] && break
  sleep 0.5
done
[ -n "$port" ] || { cat "$out/server.log"; exit 1; }
base="http://127.0.0.1:$port"
maxauth=$(printf MAXADMIN:maxadmin-bench-pw | base64) # BENCH_ADMIN_PASSWORD, bench/lib/settings.ts
header=()
case "$credentials" in
  session)
    cookie=$(curl -s -o /dev/null -D - -X POST -H "maxauth: $maxauth" "$base/maximo/oslc/login" |
      grep -i '^set-cookie: JSESSIONID=' | head -1 | sed 's/^[^:]*: //; s/;.*//')
    header=(-H "cookie: $cookie") ;;
  apikey)
    key=$(curl -s -X POST -H "maxauth: $maxauth" -H 'content-type: application/json' -d '{"expiration": -1}' \
      "$base/maximo/oslc/apitoken/create" | node -e 'process.stdin.on("data", (d) => process.stdout.write(JSON.parse(d).apikey))')
    header=(-H "apikey: $key") ;;
esac
npx autocannon -c 8 -a "$warm" "${header[@]}" "$base$path" >/dev/null 2>&1
callgrind_control -z "$pid" >/dev/null 2>&1
callgrind_control -i on "$pid" >/dev/null 2>&1
npx autocannon -c 8 -a "$count" "${header[@]}" "$base$path" >/dev/null 2>&1
callgrind_control -i off "$pid" >/dev/null 2>&1
callgrind_control -d "$pid" >/dev/null 2>&1
total=$(cat "$out"/callgrind.* | awk '/^totals:/ { print $2 }' | sort -n | tail -1)
echo "$server ${credentials:-unauthenticated}: $((total / count)) instructions per request ($count requests after $warm)"
