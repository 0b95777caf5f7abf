# nodelay: every target creates what it needs (.venv, Python deps, the Rust build) by itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
DEV_DEPS := "maturin>=1.5,<2" "pytest>=8" "pytest-timeout>=2" "ruff>=0.6" "mypy>=1.10" "trustme>=1.1" "rich>=13" "matplotlib>=3.7" "uvloop>=0.19" "hypercorn>=0.16"
export VIRTUAL_ENV := $(abspath $(VENV))

.PHONY: all venv dev release test test-rust test-python lint bench clean fuzz fuzz-smoke soak

all: dev

$(BIN)/maturin: Makefile
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

# stubtest checks the hand-written _core.pyi against the built module (hence `dev`).
lint: dev
	$(BIN)/ruff check python tests
	$(BIN)/mypy
	$(PY) -m mypy.stubtest nodelay._core --ignore-disjoint-bases \
		--allowlist stubtest-allowlist.txt

test-python: dev
	$(PY) -m pytest -q

test: dev test-rust lint test-python fuzz-smoke

# The benchmark lab (BENCHMARKS.md): release build, the `bench` extra's peers (each one
# that fails to install is skipped by the lab, not an error), then every default workload
# against every installed peer and native reference. Writes bench-results/ (JSON + PNG).
bench: release
	@for dep in $$($(PY) -c "import tomllib; print(' '.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['bench']))"); do \
		$(PY) -m pip install --quiet "$$dep" || echo "bench: $$dep could not be installed; its rows are skipped"; \
	done
	$(PY) -m nodelay.bench --syscalls --json bench-results/results.json --plot bench-results/bench.png

clean:
	rm -rf $(VENV) target

# -- Hostile world (issue 7): fuzzing the response parser, and the soak test ------------------
# fuzz/ is its own cargo workspace (not a member of ours). `fuzz` runs the coverage-guided
# libFuzzer target when nightly + cargo-fuzz are installed, else the stable fallback (seeded
# xorshift mutations of the seed corpus); `fuzz-smoke` always runs the stable fallback (what
# CI can run). New inputs go to fuzz/corpus-work, failures to fuzz/artifacts/.
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_SECONDS ?= 45
SOAK_REQUESTS ?= 1000000

.PHONY: fuzz fuzz-smoke soak

fuzz:
	@mkdir -p fuzz/corpus-work
	@if cargo +nightly fuzz --version >/dev/null 2>&1; then \
		cargo +nightly fuzz run --fuzz-dir fuzz response_parser fuzz/corpus-work \
			fuzz/corpus/response_parser -- -max_total_time=$(FUZZ_SECONDS) -max_len=65536; \
	else \
		echo "fuzz: nightly toolchain or cargo-fuzz missing: running the stable fallback"; \
		cargo run --release --manifest-path fuzz/Cargo.toml --no-default-features \
			--bin stable_fuzz -- --seconds $(FUZZ_SECONDS); \
	fi

fuzz-smoke:
	cargo run --release --manifest-path fuzz/Cargo.toml --no-default-features \
		--bin stable_fuzz -- --seconds $(FUZZ_SMOKE_SECONDS)

# 1,000,000 mixed requests in 8 threads sharing one Client (HOSTILE.md K35); fails if RSS
# grows > 10 MB, the fd count grows, or a response is crossed. SOAK_REQUESTS= to shorten.
soak: dev
	$(PY) tests/soak/soak.py --requests $(SOAK_REQUESTS)
