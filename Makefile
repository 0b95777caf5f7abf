# nodelay: every target creates what it needs (.venv, Python deps, the Rust build) by itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
DEV_DEPS := "maturin>=1.5,<2" "pytest>=8" "pytest-timeout>=2" "ruff>=0.6" "mypy>=1.10" "trustme>=1.1"
export VIRTUAL_ENV := $(abspath $(VENV))

.PHONY: all venv dev release test test-rust test-python lint bench clean

all: dev

$(BIN)/maturin:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(DEV_DEPS)

venv: $(BIN)/maturin

# Debug build of our crates (dependencies optimised, see Cargo.toml) installed into .venv.
dev: venv
	$(BIN)/maturin develop --quiet

# Optimised build for benchmarks.
release: venv
	$(BIN)/maturin develop --quiet --release

test-rust:
	cargo test --workspace --exclude nodelay-py
	cargo clippy --workspace --all-targets -- -D warnings

lint: venv
	$(BIN)/ruff check python tests
	$(BIN)/mypy

test-python: dev
	$(PY) -m pytest -q

test: dev test-rust lint test-python

# Until the benchmark lab lands: the workload-a smoke benchmark (nodelay vs
# http.client and pycurl, each in its own pinned process).
bench: release
	$(PY) -m pip install --quiet pycurl || echo "pycurl could not be installed; its row is skipped"
	$(PY) scripts/smoke_bench.py

clean:
	rm -rf $(VENV) target
