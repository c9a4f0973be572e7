# Two commands do all the setup on a fresh machine:
#   make demo   create the environment, run the canonical suite, open the workbench app
#   make test   create the environment, run the tests and the canonical regression check
#   make test-quick   the tests without those marked slow (another process, a browser, dask, seconds of CPU), for a developer's loop
#   make results      regenerate docs/results/ (the leaderboards and the benches' output)
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
RUNS ?= runs
PORT ?= 8501
# The app listens on this machine only; `make app HOST=0.0.0.0` exposes it on purpose.
HOST ?= 127.0.0.1
STAMP := $(VENV)/.installed
# Test workers (pytest-xdist): `auto` is one per core; a file's tests stay on one worker (its module
# fixtures are built once). TEST_WORKERS=0 runs them in this process.
TEST_WORKERS ?= auto
XDIST := -n $(TEST_WORKERS) --dist loadfile

.PHONY: demo app run test test-quick check results results-heavy browser redis node clean hindsight hindsight-stop test-hindsight

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e '.[dev,dask]'
	@touch $@

demo: run app

run: $(STAMP)
	$(BIN)/supportbench run datasets/canonical --out $(RUNS)

app: $(STAMP)
	SUPPORTBENCH_RUNS=$(RUNS) $(BIN)/streamlit run app.py --server.address $(HOST) --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

# The browser tests need Debian's chromium; install it when we may (root), else they skip locally.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
		echo "chromium not installed: browser tests will be skipped"; }

# The locker tests run the same suite on a real redis-server they start themselves on 127.0.0.1;
# install Debian's when we may (root). Without it they skip locally, and fail under CI.
redis:
	@command -v redis-server >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null) || \
		echo "redis-server not installed: the Redis locker tests will be skipped"; }

# The HTTP-route example of docs/extending.md is a JavaScript service; install Debian's node when
# we may (root). Without it its test skips locally, and fails under CI.
node:
	@command -v node >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs >/dev/null) || \
		echo "node not installed: the HTTP-route example's test will be skipped"; }

test: $(STAMP) browser redis node
	$(BIN)/python -m pytest $(XDIST)
	$(MAKE) --no-print-directory check

# A developer's loop: every test but the slow ones (those that start another process, a browser or
# dask, or take seconds of CPU); `make test` runs them all. Its goal is 120 s on 2 idle cores; it met it
# once (116 s), but the front ends' tests added since have taken it well over: 246 s near idle on
# 2026-12-02, 324 s at load 1.7 to 2.9 on 2026-12-03 (docs/performance.md, "The test suite").
test-quick: $(STAMP) redis
	$(BIN)/python -m pytest -m "not slow" $(XDIST)

# The project's own regression gate: the canonical suite against the approved baseline.
check: $(STAMP)
	@mkdir -p test-artifacts
	run=$$($(BIN)/supportbench run datasets/canonical --strategies default --config baselines/ci-strategies.toml --out test-artifacts/runs --quiet --junit test-artifacts/canonical-run.xml) && \
	$(BIN)/supportbench check "$$run" --baseline baselines/canonical.json --junit test-artifacts/canonical-check.xml

# docs/results/: every leaderboard and bench printout, regenerated (never edited by hand). The light
# generators take a few minutes on 2 cores; results-heavy adds the benches and the large suites (up
# to an hour; `products` needs HINDSIGHT_URL). The generators are listed in bench/results.py.
results: $(STAMP)
	$(BIN)/python bench/results.py

results-heavy: $(STAMP)
	$(BIN)/python bench/results.py --heavy

# Opt-in: a real local Hindsight 1.1.0 server (own venv, about 2.7 GB; PostgreSQL via pg0; no LLM,
# local embeddings, offline, 127.0.0.1). HINDSIGHT_VENV=<folder> reuses or puts that venv elsewhere.
HINDSIGHT_VENV ?= .cache/hindsight-venv
HINDSIGHT_PORT ?= 8888
export HINDSIGHT_VENV HINDSIGHT_PORT

hindsight:
	.ci/hindsight-server install
	.ci/hindsight-server start

hindsight-stop:
	.ci/hindsight-server stop

# The live tests against that server (they skip, saying why, without HINDSIGHT_URL).
test-hindsight: $(STAMP) hindsight
	HINDSIGHT_URL=http://127.0.0.1:$(HINDSIGHT_PORT) $(BIN)/python -m pytest tests/stores/test_hindsight_live.py -v

clean:
	rm -rf $(VENV) test-artifacts .cache
