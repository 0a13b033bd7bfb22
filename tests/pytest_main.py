"""Bazel's entry point for a test file: `pytest_main.py tests/test_x.py` runs it under pytest,
whose exit status is the test's (no test collected is a failure)."""

import sys

import pytest

if __name__ == "__main__":
    sys.exit(pytest.main(["-p", "no:cacheprovider", *sys.argv[1:]]))
