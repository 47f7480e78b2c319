#!/bin/bash
# How long the demo takes: `make demo`'s steps after installation (WordNet, migrate, load_demo,
# rundemo) on a scratch copy of the clone with a fresh database, free ports and its own Redis,
# timed from the first step until the judge link answers and until every score is stored.
# Usage, from the clone after `make install`: bench/demo_timing.sh
# IMPORT_PAIRS=1725 bench/demo_timing.sh also imports that many generated pairs into another campaign as soon
# as the judge link answers (the demo's pairs must still be scored first: issue 47's 10-minute check).
# Prints one line every 5 s (the demo's scores stored, load average), then stops the demo;
# GIVE_UP_SECONDS (default 1800) stops it earlier, printing the demo's scores per metric.
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
    if [ "${IMPORT_PAIRS:-0}" -gt 0 ]; then
      $py -c "
import json, sys
from bench.parapluie import generate_pairs
sources, hypotheses = generate_pairs(int(sys.argv[1]))
for i, (s, h) in enumerate(zip(sources, hypotheses)):
    print(json.dumps({'id': f'big{i}', 'source': s, 'hypothesis': h}))
" "$IMPORT_PAIRS" > big.jsonl
      $py manage.py import_pairs big big.jsonl --create >/dev/null
      echo "+$(elapsed) s: $IMPORT_PAIRS more pairs imported into campaign big"
    fi
  fi
  stored=$($py -c "import sqlite3; print(sqlite3.connect('db.sqlite3').execute(\"SELECT count(*) FROM scoring_score s JOIN campaigns_pair p ON s.pair_id = p.id JOIN campaigns_campaign c ON p.campaign_id = c.id WHERE c.slug = 'demo'\").fetchone()[0])")
  echo "+$(elapsed) s: $stored/$expected scores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ "$stored" -ge "$expected" ]; then
    echo "+$(elapsed) s: all $expected scores stored"
    break
  fi
  if [ "$(elapsed)" -ge "${GIVE_UP_SECONDS:-1800}" ]; then
    echo "+$(elapsed) s: given up; the demo's scores per metric:"
    $py -c "import sqlite3; [print(f'  {m}: {n}') for m, n in sqlite3.connect('db.sqlite3').execute(\"SELECT s.metric, count(*) FROM scoring_score s JOIN campaigns_pair p ON s.pair_id = p.id JOIN campaigns_campaign c ON p.campaign_id = c.id WHERE c.slug = 'demo' GROUP BY s.metric\")]"
    break
  fi
  sleep 5
done
