# nodelay: every target creates what it needs (.venv, Python deps, the Rust build) by itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
DEV_DEPS := "maturin>=1.5,<2" "pytest>=8" "pytest-timeout>=2" "ruff>=0.6" "mypy>=1.10" "trustme>=1.1" "rich>=13" "matplotlib>=3.7" "uvloop>=0.19" "hypercorn>=0.16" \
	"requests>=2.32,<3" "httpbin>=0.10.4,<0.11" "flask>=3.1,<3.2" "werkzeug>=3.1,<3.2" "waitress>=3,<4" "httpx>=0.27"
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

# -- Interop matrix (issue 13, docs/interop.md) ----------------------------------------------
# Real third-party servers on loopback × h1/h1tls/h2/h2c × one set of checks, under nodelay
# and under httpx (the oracle). Installs what it needs: the Debian web servers when missing
# (root only; otherwise each missing one is skipped with its reason), the PyPI servers and
# httpx into .venv, and the Go server (go build; Go and Node come from PATH).
# INTEROP_ARGS= passes options, e.g. INTEROP_ARGS="--servers go,nginx --protocols h2".
INTEROP_DEPS := "httpx[http2,brotli,zstd]>=0.28" "hypercorn>=0.17" "uvicorn>=0.30" "httptools>=0.6" \
	"gunicorn>=22" "waitress>=3" "httpbin>=0.10" "brotli>=1.1" "zstandard>=0.22" "trustme>=1.1"
INTEROP_DEBS := nginx apache2 h2o nghttp2-server nghttp2-client caddy
INTEROP_BUILD := build/interop
INTEROP_ARGS ?=

.PHONY: interop interop-deps interop-launchers

interop-deps: dev
	@missing=""; for pkg in $(INTEROP_DEBS); do \
		dpkg-query -W -f='$${Status}' $$pkg 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing \
				|| echo "interop: could not install$$missing; those servers are skipped"; \
		else \
			echo "interop: not root or no apt-get: missing$$missing are skipped"; \
		fi; \
	fi
	$(PY) -m pip install --quiet $(INTEROP_DEPS)
	@mkdir -p $(INTEROP_BUILD)
	@if command -v go >/dev/null; then \
		cd tests/interop/servers/go && go build -o $(abspath $(INTEROP_BUILD))/goserver . \
			|| echo "interop: go build failed; the Go server is skipped"; \
	else \
		echo "interop: go is not on PATH; the Go server is skipped"; \
	fi

interop: interop-deps
	$(PY) -m tests.interop $(INTEROP_ARGS)

# The web servers' launchers checked on their own, with httpx and curl as the clients
# (protocol per port, compression, proxying, recycling, idle close): for work on a launcher.
interop-launchers: interop-deps
	$(PY) -m pytest -q -p no:cacheprovider tests/interop/test_web_launchers.py
