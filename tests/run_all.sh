#!/usr/bin/env bash
# The test command of the README and of .ci/run: installs what the tests need
# (pip from requirements-test.txt, bazel from Debian for the BUILD check), then runs pytest.
set -uo pipefail
cd "$(dirname "$0")/.."

if ! command -v bazel >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq bazel-bootstrap || exit 1
fi
python3 -m pip install -q --disable-pip-version-check -r requirements-test.txt -e . || exit 1

python3 -m pytest -n 2 --durations=15 tests "$@"
rc=$?
if [ "$rc" = 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit "$rc"
