"""`pytest_test`: a py_test that runs one tests/ file under pytest (Bazel runs `main` as a
script, and our test files only define test functions)."""

def pytest_test(name, data = [], deps = []):
    src = "tests/%s.py" % name
    native.py_test(
        name = name,
        srcs = [src, "tests/pytest_main.py"],
        main = "tests/pytest_main.py",
        args = ["$(location %s)" % src],
        data = data,
        deps = deps,
    )
