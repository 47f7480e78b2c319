#!/bin/bash
# How long the demo takes: `make demo`'s steps after installation (WordNet, migrate, load_demo,
# rundemo) on a scratch copy of the clone with a fresh database, free ports and its own Redis,
# timed from the first step until the judge link answers and until every score is stored.
# Usage, from the clone after `make install`: bench/demo_timing.sh
# Prints one line every 5 s (scores stored, load average), then stops the demo.
set -euo pipefail
clone=$(pwd)
scratch=$(mktemp -d)
git archive HEAD | tar -x -C "$scratch"
ln -s "$clone/.venv" "$scratch/.venv"
cd "$scratch"
py=.venv/bin/python
free_port() { $py -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
elapsed() { $py -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.0f}')" "$start"; }
export DJANGO_DEBUG=true
export REDIS_URL="redis://127.0.0.1:$(free_port)/0"
web=$(free_port)
expected=$($py -c 'from metrics.registry import default_metrics; print(60 * len(default_metrics()))')
echo "scratch copy $scratch; expecting $expected scores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
start=$($py -c 'import time; print(time.time())')
$py -m metrics.wordnet >/dev/null
$py manage.py migrate --noinput >/dev/null
$py manage.py load_demo
echo "+$(elapsed) s: demo loaded"
$py manage.py rundemo --port "$web" >rundemo.log 2>&1 &
demo=$!
trap 'kill -TERM $demo; wait $demo' EXIT
answered=""
while true; do
  if [ -z "$answered" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$web/j/demo/")" = 200 ]; then
    answered=1
    echo "+$(elapsed) s: the judge link answers"
  fi
  stored=$($py -c "import sqlite3; print(sqlite3.connect('db.sqlite3').execute('SELECT count(*) FROM scoring_score').fetchone()[0])")
  echo "+$(elapsed) s: $stored/$expected scores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ "$stored" -ge "$expected" ]; then
    echo "+$(elapsed) s: all $expected scores stored"
    break
  fi
  sleep 5
done
