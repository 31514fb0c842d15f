#!/usr/bin/env bash
# Installs what is missing (Debian/Ubuntu), builds in build/ and runs the tests:
#   ./scripts/test.sh
# Ends with "N passed, N failed"; exits non-zero on any failure.  Tests that need
# the shared recordings and test vectors (../shared, or $WHISPERKV_SHARED) are
# skipped when those are missing.
set -euo pipefail
# shellcheck source=scripts/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

build=${WKV_BUILD_DIR:-build}
# shellcheck disable=SC2119 # no extra packages
wkv_install_packages
wkv_configure "$build"
wkv_build "$build"
wkv_run_tests "$build"
