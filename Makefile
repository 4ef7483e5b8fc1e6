# Developer and CI entry points of jupyter-cluster. `make test` is what CI runs.
SHELL := /bin/bash
BIN := .venv/bin
LABEL := jupyter-cluster.session-id

.PHONY: setup lab lint test clean-docker

# Docker engine, tools, .venv and the default kernel image (idempotent).
setup:
	bash scripts/setup.sh

# A 2-container cluster kernel shows in the launcher next to the local one.
lab: setup
	$(BIN)/jupyter-cluster kernelspec install cluster2 --display-name "Cluster (2 containers)" \
		--size 2 --cpu 1 --mem 2g --sys-prefix
	$(BIN)/jupyter lab --ip=127.0.0.1 --allow-root --no-browser \
		--ClusterManager.warm_pool_adaptive=True

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy jupyter_cluster

# Lint runs after setup (it needs .venv), then the suite on TEST_WORKERS
# pytest-xdist workers (a Docker test mostly waits on the engine; tests/conftest.py
# groups the tests that share something of the machine), then the tests marked
# `serial` (they need the machine to themselves) one at a time; both always run.
# pytest's exit code 5 (no tests collected) fails the target like any other
# failure. The 40 slowest tests are listed so that the suite's time (goal: 30 min)
# can be judged. Last, tests/leftovers.py fails the target if the run left any
# container, network or volume of ours that was not there before it.
TEST_WORKERS ?= 3
test: setup
	$(MAKE) --no-print-directory lint
	$(BIN)/python tests/leftovers.py before .leftovers.json
	$(BIN)/pytest -q -ra --durations=40 -n $(TEST_WORKERS) --dist loadgroup -m "not serial"; \
	parallel=$$?; \
	$(BIN)/pytest -q -ra --durations=10 -m serial; \
	serial=$$?; \
	$(BIN)/python tests/leftovers.py after .leftovers.json; \
	left=$$?; \
	test $$parallel -eq 0 && test $$serial -eq 0 && test $$left -eq 0

# Remove every container and network of every jupyter-cluster session.
clean-docker:
	docker ps -aq --filter label=$(LABEL) | xargs -r docker rm -f
	docker network ls -q --filter label=$(LABEL) | xargs -r docker network rm
