# Two set-up commands on a fresh clone: `make demo` and `make test` (see README).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

DEMO_DIR   ?= out/demo
DEMO_ITEMS ?= 1011
export AGENTHOP_DB ?= warehouse/agenthop.duckdb
export DO_NOT_TRACK := 1
export DBT_SEND_ANONYMOUS_USAGE_STATS := False

.PHONY: venv demo demo-sciexplore test bench bench-large browser clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q --upgrade pip
	$(BIN)/python -m pip install --disable-pip-version-check -q -e ".[test]"
	touch $(STAMP)

venv: $(STAMP)

# The whole pipeline on the embedded default: synthetic benchmark, simulated agents, local DuckDB
# file, HTML reports. No network, no API key. A second `make demo` changes no mart row.
demo: $(STAMP)
	$(BIN)/agenthop-harness make-benchmark --out $(DEMO_DIR)/benchmark --items $(DEMO_ITEMS) --seed 0
	$(BIN)/agenthop-harness run --panel panels/demo.yaml --messages --data $(DEMO_DIR)/benchmark --out $(DEMO_DIR)/runs
	$(BIN)/agenthop-ingest --db $(AGENTHOP_DB) --benchmark $(DEMO_DIR)/benchmark --runs $(DEMO_DIR)/runs
	$(BIN)/dbt build --log-level warn
	$(BIN)/agenthop-report compare --models early-committer,verifier --out $(DEMO_DIR)/compare.html
	$(BIN)/agenthop-report leaderboard --out $(DEMO_DIR)/leaderboard.html
	$(BIN)/agenthop-report reruns --model verifier --out $(DEMO_DIR)/reruns.html
	$(BIN)/agenthop-report item st_0001 --models early-committer,verifier --out $(DEMO_DIR)/item.html
	$(BIN)/agenthop-report paper --external panels/demo_external.csv --out $(DEMO_DIR)/paper
	@echo "demo report: $(abspath $(DEMO_DIR)/compare.html)"
	@echo "leaderboard: $(abspath $(DEMO_DIR)/leaderboard.html)"
	@echo "reruns:      $(abspath $(DEMO_DIR)/reruns.html)"
	@echo "item:        $(abspath $(DEMO_DIR)/item.html)"
	@echo "paper:       $(abspath $(DEMO_DIR)/paper/index.html)"
	@$(MAKE) --no-print-directory demo-sciexplore
	$(BIN)/agenthop-report site --out $(DEMO_DIR)/site
	@echo "site:        $(abspath $(DEMO_DIR)/site/index.html)"

# SciExplore on the same warehouse: synthetic release, the simulated search agents of
# panels/sciexplore_demo.yaml run through the harness (three paradigms, four replicates), a responses
# file of simulated systems and a simulated second judge's verdicts, ingest (with the normalized-match
# judge), dbt build, the report.
demo-sciexplore: $(STAMP)
	$(BIN)/agenthop-harness make-benchmark --benchmark sciexplore --out $(DEMO_DIR)/sciexplore/benchmark --seed 0 \
	  --responses $(DEMO_DIR)/sciexplore/responses.jsonl --judgments $(DEMO_DIR)/sciexplore/judgments.jsonl
	$(BIN)/agenthop-harness run --panel panels/sciexplore_demo.yaml --data $(DEMO_DIR)/sciexplore/benchmark \
	  --out $(DEMO_DIR)/sciexplore/runs
	$(BIN)/agenthop-ingest --db $(AGENTHOP_DB) --benchmark $(DEMO_DIR)/sciexplore/benchmark \
	  --runs $(DEMO_DIR)/sciexplore/runs \
	  --responses $(DEMO_DIR)/sciexplore/responses.jsonl --judgments $(DEMO_DIR)/sciexplore/judgments.jsonl
	$(BIN)/dbt build --log-level warn
	$(BIN)/agenthop-report sciexplore --out $(DEMO_DIR)/sciexplore/report
	@echo "sciexplore:  $(abspath $(DEMO_DIR)/sciexplore/report/index.html)"

# Headless Chromium for the report tests (Debian package); the tests skip loudly without it. When the
# install fails (no root, apt's lock held by another process, no network), make goes on and the warning
# quotes apt's last lines, which say why.
browser:
	@command -v chromium-headless-shell >/dev/null 2>&1 || command -v chromium >/dev/null 2>&1 || { \
	  out=$$( (apt-get update -qq && apt-get install -y -qq chromium-headless-shell) 2>&1 ) || { \
	    echo "WARNING: could not install chromium-headless-shell; browser tests will be SKIPPED. apt-get said:"; \
	    printf '%s\n' "$$out" | tail -n 15 | sed 's/^/  | /'; }; }

# Two pytest workers, one test file each at a time, the costly files first (tests/scheduling.py);
# TEST_WORKERS=0 runs everything in one process.
TEST_WORKERS ?= 2
test: $(STAMP) browser
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

bench: $(STAMP)
	$(BIN)/python bench/run_bench.py

# the stages at full size that take too long for every `make bench` (README, Performance)
bench-large: $(STAMP)
	$(BIN)/python bench/run_bench.py --large

clean:
	rm -rf out warehouse target logs test-artifacts
