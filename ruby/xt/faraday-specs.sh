#!/bin/sh
# faraday-specs.sh FARADAY_SRC: Faraday's shared adapter specs (its spec/support,
# the version Debian ships) in Faraday's own setup, for its Net::HTTP adapter
# and for nodelay's, one after the other; prints each run's counts and fails
# when either run fails. FARADAY_SRC is a directory with Faraday's spec/
# (unpacked sources, or ruby/xt/faraday-1.1.0-spec). The gem comes from
# RUBYLIB (ruby/lib and the built extension).
set -eu
src=$1
here=$(cd "$(dirname "$0")" && pwd)
cd "$src"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
for spec in spec/faraday/adapter/net_http_spec.rb "$here/nodelay_adapter_spec.rb"; do
    echo "== $spec"
    rspec --options /dev/null --require "$here/faraday_spec_helper.rb" --format progress "$spec" \
        > "$log" 2>&1 || status=1
    grep -E 'examples?, [0-9]+ failures?|^rspec |error occurred' "$log" || true
done
exit $status
