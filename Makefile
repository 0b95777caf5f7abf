# nodelay: every target creates what it needs (.venv, Python deps, the Rust build) by itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
# What the test suite imports (the checkout's venv and each wheel's test venv install it).
TEST_DEPS := "pytest>=8" "pytest-timeout>=2" "trustme>=1.1" "rich>=13" "matplotlib>=3.7" "uvloop>=0.19" "hypercorn>=0.16" \
	"requests>=2.32,<3" "httpbin>=0.10.4,<0.11" "flask>=3.1,<3.2" "werkzeug>=3.1,<3.2" "waitress>=3,<4" "httpx>=0.27" "truststore>=0.9" \
	"respx>=0.22" "pytest-httpx>=0.35" "vcrpy>=9.4" \
	"responses>=0.25" "requests-mock>=1.12" "requests-cache>=1.2" "hishel[async]>=2,<3" "opentelemetry-sdk>=1.29" \
	"opentelemetry-instrumentation-requests>=0.50b0" "stripe>=12" \
	"httpx2>=2.16,<3" "h2>=4" "opentelemetry-instrumentation-httpx>=0.66b2" "openai>=3.57" "anthropic>=2.14" \
	"httpx-aiohttp[httpx2]>=0.2" "wreq>=0.13,<0.14" "pyqwest>=0.12,<0.13" "zapros>=0.23,<0.24" \
	"socksio>=1,<2" "pysocks>=1.7,<2" "twisted>=24" \
	"dask[bag]>=2024.1" "distributed>=2024.1" "pyarrow>=15"
# What only `make test-scale` needs: Ray with Ray Data is hundreds of MB (docs/scale-out.md).
SCALE_DEPS := "ray[data]>=2.9"
DEV_DEPS := "maturin>=1.5,<2" "ruff>=0.6" "mypy>=1.10" $(TEST_DEPS)
export VIRTUAL_ENV := $(abspath $(VENV))

.PHONY: all venv dev release test test-rust test-python test-scale test-perl test-ruby asan-ruby lint bench bench-full bench-peers hops clean fuzz fuzz-smoke soak \
	wheel test-wheel docs

all: dev

$(BIN)/maturin: Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(DEV_DEPS)

venv: $(BIN)/maturin

# Debug build of our crates (dependencies optimised, see Cargo.toml) installed into .venv.
# The benchmark lab (bench/, not part of the wheel) goes on the venv's path by a .pth file.
dev: venv
	$(BIN)/maturin develop --quiet
	$(PY) -c "import pathlib, sysconfig; pathlib.Path(sysconfig.get_path('purelib'), 'nodelay-bench-lab.pth').write_text('$(abspath bench)\n')"

# Optimised build for benchmarks.
release: venv
	$(BIN)/maturin develop --quiet --release

# `cargo test` links the C ABI test against libnodelay_ffi.a, which only `cargo build` makes.
test-rust:
	cargo build -p nodelay-ffi
	cargo test --workspace --exclude nodelay-py
	cargo clippy --workspace --all-targets -- -D warnings

# stubtest checks the hand-written _core.pyi against the built module (hence `dev`).
lint: dev
	$(BIN)/ruff check python tests bench
	$(BIN)/mypy
	$(PY) -m mypy.stubtest nodelay._core --ignore-disjoint-bases \
		--allowlist stubtest-allowlist.txt

# The cookie-date oracle of tests/test_cookie_dates.py: tough-cookie's RFC 6265 parseDate
# (Debian's node-tough-cookie; installed when missing and root, otherwise that test skips).
PY_TEST_DEBS := node-tough-cookie gdb

# The SOCKS5 server of the SOCKS tests (tests/socks_servers.py, perl/t/12-socks.t,
# ruby/test/test_socks.rb; skipped where it is missing); Twisted, from TEST_DEPS, is the
# SOCKS4/4A one.
SOCKS_TEST_DEBS := microsocks

.PHONY: socks-deps
socks-deps:
	@$(MAKE) --no-print-directory perl-deps PERL_DEBS="$(SOCKS_TEST_DEBS)" DEPS_FOR=socks-tests

test-python: dev socks-deps
	$(MAKE) --no-print-directory perl-deps PERL_DEBS="$(PY_TEST_DEBS)" DEPS_FOR=test-python
	$(PY) -m pytest -q
	$(MAKE) test-httpx-suites
	$(MAKE) test-requests-suite

# httpx's own test suite as released on PyPI (the 0.28.1 sdist), run with nodelay.ext.httpx
# swapped in, and over httpx2 (which publishes no suite) with nodelay.ext.httpx2: a test that
# fails and tests/suites/*-known-failures.txt does not list fails the target
# (docs/httpx-transport.md). The suite runs in a venv of its own that never sees .venv's
# site-packages (what another target installs there, such as httptools for `make interop`,
# changes what uvicorn serves the suite with): it gets the suite's dependencies, the versions
# of httpx, httpx2 and the rest of SUITE_PINNED that .venv has (so both test the same
# libraries), and nodelay from this checkout by a .pth line naming python/ (the package
# `make dev` built in place). SUITE_BASELINE=1 runs each suite without the swap first, for
# the counts to compare.
SUITES := build/suites
SUITE_VENV := $(SUITES)/venv
HTTPX_SUITE := httpx-0.28.1
SUITE_DEPS := "uvicorn==0.32.1" "trio==0.35.0" "chardet==5.2.0" "click==8.1.7" \
	"zstandard==0.25.0" "brotli==1.2.1" "socksio==1.0.0"
# Installed in the suite venv at the version .venv has.
SUITE_PINNED := httpx httpcore httpx2 httpcore2 h2 anyio pytest trustme certifi idna \
	pygments rich
SUITE_RUN = $(SUITE_VENV)/bin/python tests/suites/run_library_suite.py $(SUITES)/$(HTTPX_SUITE) \
	--suite-library httpx -m "not network"
.PHONY: test-httpx-suites
test-httpx-suites: dev
	@test -x $(SUITE_VENV)/bin/python || $(PYTHON) -m venv $(SUITE_VENV)
	@suite_site=$$($(SUITE_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))'); \
	rm -f $$suite_site/nodelay-dev-venv.pth; \
	echo "$(abspath python)" > $$suite_site/nodelay-checkout.pth
	$(SUITE_VENV)/bin/python -m pip install --quiet $(SUITE_DEPS) \
		$$($(PY) tests/suites/pins.py $(SUITE_PINNED))
	@test -d $(SUITES)/$(HTTPX_SUITE)/tests || { \
		$(PY) -m pip download --quiet --no-binary :all: --no-deps $(subst -,==,$(HTTPX_SUITE)) -d $(SUITES) && \
		tar xzf $(SUITES)/$(HTTPX_SUITE).tar.gz -C $(SUITES); }
	cat tests/suites/httpx-known-failures.txt tests/suites/httpx2-known-failures.txt \
		> $(SUITES)/httpx2-known-failures.txt
	@set -e; for swap in $(if $(SUITE_BASELINE),none) nodelay; do \
		$(SUITE_RUN) --library httpx --swap $$swap --known-failures tests/suites/httpx-known-failures.txt; \
		$(SUITE_RUN) --library httpx2 --swap $$swap --known-failures $(SUITES)/httpx2-known-failures.txt; \
	done

# The long cluster tests (tests/test_ext_dask.py, tests/test_ext_ray.py marked `scale`):
# 20,000 URLs on local 2-worker Dask and Ray clusters, a worker killed mid-run.
test-scale: dev
	$(PY) -m pip install --quiet $(SCALE_DEPS)
	$(PY) -m pytest -q -m scale tests/test_ext_dask.py tests/test_ext_ray.py

# The Perl front (perl/, XS over crates/nodelay-ffi): core Perl, a C compiler
# and cargo; the C ABI's own C test runs in test-rust (crates/nodelay-ffi/tests).
# The adapter tests compare with stock LWP, HTTP::Message and HTTP::Cookies (Debian
# packages, installed when missing and root; otherwise those tests are skipped).
PERL_TEST_DEBS := libwww-perl libhttp-message-perl libhttp-cookies-perl libhttp-cookiejar-perl
# The lab's Perl peers (nodelay bench --lang perl); a missing one is a skipped row.
PERL_BENCH_DEBS := $(PERL_TEST_DEBS) libfurl-perl libhijk-perl libwww-curl-perl \
	libmojolicious-perl libcpanel-json-xs-perl

.PHONY: perl-deps bench-perl bench-ruby
# Installs the Debian packages PERL_DEBS names that are missing (root only); DEPS_FOR names
# who asked, in the messages.
DEPS_FOR ?= perl
perl-deps:
	@missing=""; for pkg in $(PERL_DEBS); do \
		dpkg-query -W -f='$${Status}' $$pkg 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing \
				|| echo "$(DEPS_FOR): could not install$$missing; what needs them is skipped"; \
		else \
			echo "$(DEPS_FOR): not root or no apt-get: missing$$missing; what needs them is skipped"; \
		fi; \
	fi

test-perl: socks-deps
	$(MAKE) perl-deps PERL_DEBS="$(PERL_TEST_DEBS) $(PERL_SUITE_DEBS)"
	cd perl && perl Makefile.PL && $(MAKE) && $(MAKE) test
	$(MAKE) perl-suites

# The incumbents' own suites over the adapters (docs/perl.md), from the Debian source
# packages of the versions Debian installs (perl/xt/debian-source.sh adds a deb-src entry
# when apt has none; nothing of them is kept in the repository): LWP's t/ run stock and with
# LWP::Protocol::nodelay as the http and https implementor (counts and wall time of each),
# and HTTP::Tiny's request/response corpus (in the perl source package) replayed on real
# sockets through stock HTTP::Tiny and Nodelay::Tiny. Each fails on a check stock passes
# and nodelay does not (for the corpus: one not in perl/xt/tiny-corpus.known).
PERL_SUITE_DEBS := libhttp-daemon-perl libtest-fatal-perl libtest-needs-perl \
	libtest-requiresinternet-perl libtest-leaktrace-perl
INCUMBENTS := $(CURDIR)/build/incumbents
.PHONY: perl-suites
perl-suites:
	@if lwp=$$(perl/xt/debian-source.sh libwww-perl $(INCUMBENTS)/lwp); then \
		cd perl && perl xt/incumbent-suite.pl --dir "$$lwp" --label LWP; \
	else echo "perl-suites: LWP's t/ skipped: apt gave no libwww-perl sources"; fi
	@if perl_src=$$(perl/xt/debian-source.sh perl $(INCUMBENTS)/perl cpan/HTTP-Tiny); then \
		cd perl && perl -Iblib/lib -Iblib/arch xt/tiny-corpus.pl \
			--corpus "$$perl_src/cpan/HTTP-Tiny/corpus" --known xt/tiny-corpus.known; \
	else echo "perl-suites: HTTP::Tiny's corpus skipped: apt gave no perl sources"; fi

# The Perl distribution as it is shipped (docs/perl.md): `make dist` in perl/ makes
# Nodelay-VERSION.tar.gz carrying the engine's Rust sources and the test server under engine/
# (crates/nodelay-ffi/package-sources.sh); test-perl-dist unpacks it outside any checkout and
# runs `perl Makefile.PL && make && make test` there.
PERL_DIST_CHECK := build/perl-dist
.PHONY: test-perl-dist
test-perl-dist:
	rm -f perl/Nodelay-*.tar perl/Nodelay-*.tar.gz
	cd perl && perl Makefile.PL && $(MAKE) dist
	rm -rf $(PERL_DIST_CHECK) && mkdir -p $(PERL_DIST_CHECK)
	tar xzf perl/Nodelay-*.tar.gz -C $(PERL_DIST_CHECK)
	cd $(PERL_DIST_CHECK)/Nodelay-* && env -u NODELAY_ROOT perl Makefile.PL && $(MAKE) && $(MAKE) test

# The Perl suite over an AddressSanitizer build of the XS shim (docs/perl.md): a copy of
# perl/ in build/perl-asan compiled with -fsanitize=address, the tests run with the ASan
# runtime preloaded into perl (perl itself is not instrumented, so leak reports, which
# would be perl's own, are off). Any ASan report fails the run.
PERL_ASAN_BUILD := build/perl-asan
.PHONY: asan-perl
asan-perl:
	@if [ ! -f "$$($(CC) -print-file-name=libasan.so)" ]; then \
		echo "asan-perl: $(CC) has no AddressSanitizer runtime (libasan.so); skipped"; exit 0; fi; \
	$(MAKE) asan-perl-run

.PHONY: asan-perl-run
asan-perl-run:
	$(MAKE) perl-deps PERL_DEBS="$(PERL_TEST_DEBS)"
	rm -rf $(PERL_ASAN_BUILD) && mkdir -p $(PERL_ASAN_BUILD)
	cp -r perl/Makefile.PL perl/Nodelay.xs perl/typemap perl/lib perl/t $(PERL_ASAN_BUILD)/
	cd $(PERL_ASAN_BUILD) && NODELAY_ROOT=$(CURDIR) NODELAY_ASAN=1 perl Makefile.PL && $(MAKE)
	nm -D $(PERL_ASAN_BUILD)/blib/arch/auto/Nodelay/Nodelay.so | grep -q __asan_init
	cd $(PERL_ASAN_BUILD) && LD_PRELOAD="$$($(CC) -print-file-name=libasan.so)" \
		ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1 \
		NODELAY_SERVER="$$(sed -n 's/^export NODELAY_SERVER = //p' Makefile)" prove -b t

# The lab's Perl rows on a release build of the Perl front (docs/perl.md).
bench-perl: release
	$(MAKE) perl-deps PERL_DEBS="$(PERL_BENCH_DEBS)"
	cd perl && perl Makefile.PL && $(MAKE) realclean && NODELAY_PROFILE=release perl Makefile.PL && $(MAKE)
	$(PY) -m nodelay bench --lang perl --syscalls --json bench-results/perl.json \
		--html bench-results/perl.html $(BENCH_ARGS)

# The Ruby gem (ruby/, a C extension over crates/nodelay-ffi): ruby-dev, ruby-faraday and
# ruby-webmock from Debian when missing (root only), the static library and the test server by
# cargo, the extension built out of tree in build/ruby, then the minitest suite (the Faraday
# adapter's and the WebMock adapter's tests skip without their library).
RUBY_DEBS := ruby ruby-dev ruby-faraday ruby-webmock
RUBY_BUILD := build/ruby
CARGO_OUT := $(abspath $(or $(CARGO_TARGET_DIR),target))/debug
test-ruby: socks-deps
	@[ -f "$$(ruby -e 'print RbConfig::CONFIG["rubyhdrdir"]' 2>/dev/null)/ruby.h" ] && ruby -rfaraday -rwebmock -e '' 2>/dev/null || { \
		[ "$$(id -u)" = 0 ] || { echo "test-ruby: not root: $(RUBY_DEBS) are not all installed"; exit 0; }; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(RUBY_DEBS) \
			|| echo "test-ruby: could not install $(RUBY_DEBS)"; }
	cargo build -p nodelay-ffi -p nodelay-server --bin nodelay-server
	mkdir -p $(RUBY_BUILD)/nodelay
	cd $(RUBY_BUILD)/nodelay && ruby $(CURDIR)/ruby/ext/nodelay/extconf.rb >/dev/null && $(MAKE) --no-print-directory
	NODELAY_EXT_DIR=$(abspath $(RUBY_BUILD)) NODELAY_SERVER=$(CARGO_OUT)/nodelay-server \
		ruby -e 'ARGV.each { |f| require File.expand_path(f) }' ruby/test/test_*.rb
	$(MAKE) faraday-specs

# Faraday's shared adapter specs (spec/support of the ruby-faraday version Debian ships) in
# Faraday's own setup, WebMock included, for its Net::HTTP adapter and for nodelay's
# (ruby/xt/faraday-specs.sh; fails when either run fails an example). The sources come from
# FARADAY_SRC= (an unpacked Faraday release of the installed version), else from the Debian
# source package, else from FARADAY_SPECS, the spec files of Faraday's v1.1.0 release kept in
# the repository (this mirror answers 404 for ruby-faraday 1.1.0's tarball); an installed
# Faraday of another version with no sources from apt fails the target.
RUBY_SPEC_DEBS := ruby-rspec ruby-multipart-parser ruby-rack
FARADAY_SRC ?=
FARADAY_SPECS_VERSION := 1.1.0
FARADAY_SPECS := $(CURDIR)/ruby/xt/faraday-$(FARADAY_SPECS_VERSION)-spec
.PHONY: faraday-specs
faraday-specs:
	$(MAKE) perl-deps PERL_DEBS="$(RUBY_SPEC_DEBS)" DEPS_FOR=faraday-specs
	@ruby -rfaraday -rwebmock -rrspec/core -e '' 2>/dev/null \
		|| { echo "faraday-specs: skipped: Faraday, WebMock or RSpec is not installed"; exit 0; }; \
	src="$(FARADAY_SRC)"; \
	if [ -z "$$src" ] && ! src=$$(perl/xt/debian-source.sh ruby-faraday $(INCUMBENTS)/faraday); then \
		installed=$$(ruby -rfaraday -e 'print Faraday::VERSION'); \
		[ "$$installed" = "$(FARADAY_SPECS_VERSION)" ] || { echo "faraday-specs: Faraday $$installed is installed," \
			"apt gives no sources for it, and the repository keeps only $(FARADAY_SPECS_VERSION)'s specs"; exit 1; }; \
		echo "faraday-specs: no ruby-faraday sources from apt: Faraday $$installed's specs from $(FARADAY_SPECS)"; \
		src=$(FARADAY_SPECS); \
	fi; \
	RUBYLIB=$(CURDIR)/ruby/lib:$(abspath $(RUBY_BUILD)) ruby/xt/faraday-specs.sh "$$src"

# The gem as it is shipped (docs/ruby.md): build/gem/nodelay-*.gem carries the engine's Rust
# sources (ruby/xt/stage-gem.sh), and `gem install` builds them with cargo. test-gem installs
# it from the .gem alone into a scratch GEM_HOME, outside the checkout, and runs
# ruby/xt/gem-smoke.rb against the embedded server.
GEM_STAGE := build/gem
GEM_HOME_TEST := $(CURDIR)/build/gem-home
.PHONY: gem test-gem
gem:
	ruby/xt/stage-gem.sh $(CURDIR) $(GEM_STAGE)
	cd $(GEM_STAGE) && gem build nodelay.gemspec
test-gem: gem
	cargo build -p nodelay-server --bin nodelay-server
	rm -rf $(GEM_HOME_TEST)
	cd /tmp && env -u NODELAY_ROOT gem install --local --no-document --install-dir $(GEM_HOME_TEST) \
		$(CURDIR)/$(GEM_STAGE)/nodelay-*.gem
	cd /tmp && GEM_HOME=$(GEM_HOME_TEST) GEM_PATH=$(GEM_HOME_TEST) ruby $(CURDIR)/ruby/xt/gem-smoke.rb \
		$(CARGO_OUT)/nodelay-server

# The Ruby suite over an extension built with AddressSanitizer (build/ruby-asan): Ruby itself
# is not instrumented, so the ASan runtime is preloaded. Leak detection is off because Ruby
# frees nothing at exit (every object would be reported); test_memory.rb watches for leaks. The
# preload is taken out of the environment the tests' child processes (curl, the server) get;
# NODELAY_ASAN_PRELOAD gives it to the child Ruby processes that load the extension.
RUBY_ASAN_BUILD := build/ruby-asan
RUBY_ASAN_FLAGS := -fsanitize=address --param=asan-stack=0 -fno-omit-frame-pointer -g -O1
asan-ruby:
	cargo build -p nodelay-ffi -p nodelay-server --bin nodelay-server
	mkdir -p $(RUBY_ASAN_BUILD)/nodelay
	cd $(RUBY_ASAN_BUILD)/nodelay && ruby $(CURDIR)/ruby/ext/nodelay/extconf.rb \
		--with-cflags="$(RUBY_ASAN_FLAGS)" --with-ldflags="-fsanitize=address" >/dev/null \
		&& $(MAKE) --no-print-directory
	asan=$$($(CC) -print-file-name=libasan.so) && LD_PRELOAD=$$asan NODELAY_ASAN_PRELOAD=$$asan ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:use_sigaltstack=0 \
		NODELAY_EXT_DIR=$(abspath $(RUBY_ASAN_BUILD)) NODELAY_SERVER=$(CARGO_OUT)/nodelay-server \
		ruby -e 'ENV.delete("LD_PRELOAD"); ARGV.each { |f| require File.expand_path(f) }' ruby/test/test_*.rb

# The lab's Ruby rows (nodelay bench --lang ruby; docs/ruby.md) on a release build: the
# extension is built out of tree in RUBY_BENCH_BUILD against a release libnodelay_ffi.a, and
# the lab's embedded server is the release Python extension. Peers are Debian packages
# (RubyGems is not reachable here); a missing one is a skipped row. ruby-oj parses
# workload b's document for every peer (nodelay's rows use Response#json).
RUBY_BENCH_DEBS := $(RUBY_DEBS) ruby-curb ruby-excon ruby-typhoeus ruby-httpclient ruby-http \
	ruby-net-http-persistent ruby-oj
RUBY_BENCH_BUILD := build/ruby-release
bench-ruby: release
	$(MAKE) perl-deps PERL_DEBS="$(RUBY_BENCH_DEBS)" DEPS_FOR=bench-ruby
	mkdir -p $(RUBY_BENCH_BUILD)/nodelay
	cd $(RUBY_BENCH_BUILD)/nodelay && NODELAY_PROFILE=release ruby $(CURDIR)/ruby/ext/nodelay/extconf.rb >/dev/null \
		&& $(MAKE) --no-print-directory
	$(PY) -m nodelay bench --lang ruby --syscalls --json bench-results/ruby.json \
		--plot bench-results/ruby.png --html bench-results/ruby.html $(BENCH_ARGS)

# test-perl and test-ruby before test-python: the lab's --lang perl and --lang ruby tests
# (tests/test_bench_lang.py) run the built fronts.
test: dev test-rust lint test-perl asan-perl test-ruby asan-ruby test-python fuzz-smoke

# The benchmark lab (bench/, docs/performance.md): release build, the peers of
# bench/requirements.txt (each one that fails to install is skipped by the lab, not an
# error), then the lab. `make bench` runs the short lab (`--short`: workloads a, b, e, f over
# nodelay, the Rust floor and the two fastest peers installed, about 25 rows at 3
# repetitions); `make bench-full` every workload against every installed peer and native
# reference (about 200 rows at 5 repetitions).
# Both write bench-results/: results.json, bench.png and the self-contained report.html,
# each row with p50/p90/p99/max latency, and print one line per finished row on stderr when
# it is not a terminal. BENCH_ARGS= passes options (e.g. BENCH_ARGS="--workloads a,i").
# `nodelay bench` finds the lab in this checkout by itself (no `make dev` needed first).
BENCH_ARGS ?=
BENCH_OUTPUTS := --json bench-results/results.json --plot bench-results/bench.png \
	--html bench-results/report.html
bench-peers: release
	@grep -v '^#' bench/requirements.txt | while read -r dep; do \
		[ -n "$$dep" ] || continue; \
		$(PY) -m pip install --quiet "$$dep" || echo "bench: $$dep could not be installed; its rows are skipped"; \
	done

# The hop count of docs/architecture.md ("Hop count"): for each front, the functions across
# files a request crosses from the public call to the write that sends it, read by gdb on the
# dev build (tools/hops.py). Re-run after any change to the request path and copy its figures
# to the page (tests/test_hops.py fails while the sync figures differ). The Perl and Ruby
# paths use their fronts built as test-perl and test-ruby build them (debug libnodelay_ffi);
# a front that does not build is skipped, saying so. HOPS_ARGS="sync --json": one path, JSON.
hops: dev
	$(MAKE) --no-print-directory perl-deps PERL_DEBS="gdb" DEPS_FOR=hops
	cargo build -p nodelay-ffi
	(cd perl && perl Makefile.PL >/dev/null && $(MAKE) --no-print-directory >/dev/null) \
		|| echo "hops: the Perl front did not build (make test-perl installs what it needs)"
	mkdir -p $(RUBY_BUILD)/nodelay
	(cd $(RUBY_BUILD)/nodelay && ruby $(CURDIR)/ruby/ext/nodelay/extconf.rb >/dev/null \
		&& $(MAKE) --no-print-directory >/dev/null) \
		|| echo "hops: the Ruby front did not build (make test-ruby installs what it needs)"
	$(PY) tools/hops.py $(HOPS_ARGS)

bench: bench-peers
	$(PY) -m nodelay bench --short --syscalls $(BENCH_OUTPUTS) $(BENCH_ARGS)

bench-full: bench-peers
	$(PY) -m nodelay bench --syscalls $(BENCH_OUTPUTS) $(BENCH_ARGS)

clean:
	rm -rf $(VENV) target $(DIST) site
	-cd perl && [ -f Makefile ] && $(MAKE) realclean

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

# The soak (bench/nodelay_bench/soak.py, docs/hostile.md K35): 1,000,000 mixed requests in 8
# threads sharing one Client, then the pool-pressure phase; fails if RSS grows > 10 MB, the
# fd count grows, or a response is crossed. SOAK_REQUESTS= to shorten.
soak: dev
	$(PY) -m nodelay_bench.soak --requests $(SOAK_REQUESTS)

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

# -- Wheels (issue 17): installable where no Rust toolchain exists ----------------------------
# `wheel` builds one manylinux2014 (glibc 2.17) wheel per CPython in WHEEL_PYTHONS with zig as
# the linker (ziglang from PyPI, found by maturin as `python -m ziglang` through the venv on
# PATH, so no old-glibc build image is needed) and an sdist. maturin's
# auditwheel check fails the build if the extension needs a shared library outside the
# manylinux allowlist. The interpreters come from pyenv; WHEEL_PYTHONS= overrides them.
# `test-wheel` installs each wheel into a fresh venv of its interpreter with cargo removed from
# PATH and runs the tests against the installed package: the run starts outside the checkout
# and the tests/installed_package.py plugin stops it unless `nodelay` and `nodelay._core` are
# imported from the venv's site-packages. The lab (bench/, not in the wheel) is on PYTHONPATH
# for its own tests, as `make dev` puts it on .venv's path.
WHEEL_DEPS := "ziglang>=0.13,<0.14"
WHEEL_VERSIONS := 3.11 3.12 3.13
MANYLINUX := manylinux2014
DIST := dist
PYENV_ROOT ?= $(shell pyenv root 2>/dev/null || echo $(HOME)/.pyenv)
WHEEL_PYTHONS ?= $(foreach v,$(WHEEL_VERSIONS),$(firstword $(wildcard $(PYENV_ROOT)/versions/$(v).*/bin/python$(v))))
WHEEL_BUILD := build/wheel-test
# The wheels' runs repeat the suite `make test` has run serially: three worker processes
# (pytest-xdist, whole files per worker so each file's servers start once) overlap the
# suite's waits on deadlines and servers, 2.6x faster on 2 cores (136 s against 353 s).
TEST_WHEEL_WORKERS ?= 3
TEST_WHEEL_ARGS ?= -q -x -p no:cacheprovider -n $(TEST_WHEEL_WORKERS) --dist loadfile
TEST_WHEEL_DEPS := $(TEST_DEPS) "pytest-xdist>=3"

wheel: venv
	$(PY) -m pip install --quiet $(WHEEL_DEPS)
	rm -rf $(DIST)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/maturin build --release --strip --zig --compatibility $(MANYLINUX) --auditwheel check \
		--out $(DIST) $(foreach p,$(WHEEL_PYTHONS),-i $(p))
	$(BIN)/maturin sdist --out $(DIST)
	@ls -l $(DIST)

test-wheel:
	@test -n "$(WHEEL_PYTHONS)" || { echo "test-wheel: no interpreter found"; exit 1; }
	@set -e; for py in $(WHEEL_PYTHONS); do \
		tag=$$($$py -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")'); \
		whl=$$(ls $(DIST)/nodelay-*-$$tag-*manylinux*.whl $(DIST)/nodelay-*-abi3-*manylinux*.whl 2>/dev/null | head -1); \
		test -n "$$whl" || { echo "test-wheel: no wheel for $$tag in $(DIST)/ (run make wheel)"; exit 1; }; \
		env=$(WHEEL_BUILD)/$$tag; rm -rf $$env; $$py -m venv $$env; \
		nocargo=$$(echo "$$PATH" | tr ':' '\n' | grep -v -e cargo -e rustup | paste -sd:); \
		echo "== $$tag: $$whl"; \
		PATH="$$nocargo" sh -c '! command -v cargo >/dev/null && ! command -v rustc >/dev/null' \
			|| { echo "test-wheel: cargo or rustc is still on PATH"; exit 1; }; \
		PATH="$$nocargo" $$env/bin/python -m pip install --quiet $(TEST_WHEEL_DEPS); \
		t0=$$(date +%s.%N); \
		PATH="$$nocargo" $$env/bin/python -m pip install --quiet --no-deps --only-binary :all: "$$whl"; \
		t1=$$(date +%s.%N); \
		(cd $(WHEEL_BUILD) && $$tag/bin/python -c "import nodelay; print('nodelay under test:', nodelay.__file__)"); \
		rc=0; (cd $(WHEEL_BUILD) && PATH="$$nocargo" PYTHONPATH=$(CURDIR)/tests:$(CURDIR)/bench \
			$(abspath $(WHEEL_BUILD))/$$tag/bin/python -m pytest -p installed_package $(TEST_WHEEL_ARGS) \
			--rootdir $(CURDIR) -c $(CURDIR)/pyproject.toml $(CURDIR)/tests) || rc=$$?; \
		t2=$$(date +%s.%N); \
		echo "== $$tag: wheel $$(du -k "$$whl" | cut -f1) KiB, install $$(python3 -c "print(round($$t1 - $$t0, 1))") s, tests $$(python3 -c "print(round($$t2 - $$t1))") s, pytest exit $$rc"; \
		test $$rc = 0; \
	done

# -- Documentation site (issue 17): mkdocs-material + mkdocstrings over docs/ ----------------
# --strict: a broken link, an unresolved API reference or a page missing from the nav fails
# the build. The API reference is read from python/nodelay's sources and _core.pyi (no build
# needed); the lab-results page is generated from docs/bench/*.json (docs/_hooks/).
DOCS_DEPS := "mkdocs>=1.6,<2" "mkdocs-material>=9.5,<10" "mkdocstrings[python]>=0.26,<2"

docs: venv
	$(PY) -m pip install --quiet $(DOCS_DEPS)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# -- requests' own test suite over nodelay.ext.requests (docs/requests-adapter.md) ------------
# The sdist of the installed requests from PyPI, unpacked in build/requests-suite, with the
# test dependencies it names (pytest-httpbin...). `requests-suite` runs it twice, as released
# and with every Session mounting nodelay's Adapter (tests/requests_suite_adapter.py: the
# known differences are strict xfails, so each run passes or fails as a whole); the counts of
# each run are its pytest summary line. `test-requests-suite` is the adapter's run of the
# files that send requests (about 75 s here), for `make test`.
REQUESTS_SUITE := build/requests-suite
REQUESTS_SUITE_DEPS := "pytest-httpbin==2.1.0" "pytest-mock>=3" "trustme>=1.1" "PySocks>=1.7"
REQUESTS_SUITE_SENDING := tests/test_requests.py tests/test_lowlevel.py tests/test_adapters.py \
	tests/test_testserver.py
REQUESTS_SUITE_PYTEST := -q -p no:cacheprovider --timeout 60 -rfEs

.PHONY: requests-suite-src requests-suite test-requests-suite
requests-suite-src: dev
	$(PY) -m pip install --quiet $(REQUESTS_SUITE_DEPS)
	@version=$$($(PY) -c "import requests; print(requests.__version__)"); \
	if [ ! -d $(REQUESTS_SUITE)/requests-$$version/tests ]; then \
		rm -rf $(REQUESTS_SUITE) && mkdir -p $(REQUESTS_SUITE) && \
		$(PY) -m pip download --quiet --no-binary :all: --no-deps --dest $(REQUESTS_SUITE) "requests==$$version" && \
		tar xzf $(REQUESTS_SUITE)/requests-$$version.tar.gz -C $(REQUESTS_SUITE); \
	fi; \
	ln -sfn requests-$$version $(REQUESTS_SUITE)/current

requests-suite: requests-suite-src
	-cd $(REQUESTS_SUITE)/current && $(abspath $(PY)) -m pytest $(REQUESTS_SUITE_PYTEST) tests
	cd $(REQUESTS_SUITE)/current && PYTHONPATH=$(abspath tests) $(abspath $(PY)) -m pytest \
		-p requests_suite_adapter $(REQUESTS_SUITE_PYTEST) tests

test-requests-suite: requests-suite-src
	cd $(REQUESTS_SUITE)/current && PYTHONPATH=$(abspath tests) $(abspath $(PY)) -m pytest \
		-p requests_suite_adapter $(REQUESTS_SUITE_PYTEST) $(REQUESTS_SUITE_SENDING)
