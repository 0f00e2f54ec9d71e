# Two commands for a fresh machine (Python 3.11+ and a C compiler):
#   make demo   - set up a virtual environment, install, run `parterre demo`
#   make test   - set up a virtual environment, install, run the test suite
#   make lint   - ruff and mypy over the tree configured in pyproject.toml (0 findings)
# `make install` compiles the engines' hot modules with mypyc when a C compiler is present
# (setup.py COMPILED; PARTERRE_ENGINES=pure at run time or `make install PURE=1` keeps them pure).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install demo test test-faults test-long lint bench compiled protos clean

$(BIN)/.installed: pyproject.toml setup.py
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is required (set PYTHON=python3.11)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	@if [ -z "$(PURE)" ] && command -v "$${CC:-cc}" >/dev/null 2>&1; then \
	  echo "install: compiling the engines' hot modules with mypyc, the files setup.py COMPILED lists (about 1-3 minutes on 2 cores, silent meanwhile; PURE=1 skips)"; \
	  PARTERRE_MYPYC=1 $(BIN)/python -m pip install --quiet --no-build-isolation --no-deps -e . \
	    || { echo "install: the mypyc build failed; the engines stay pure Python" >&2; \
	         find games -name '*.cpython-*.so' -delete; $(BIN)/python -m pip install --quiet --no-deps -e .; }; \
	else \
	  echo "install: no C compiler (or PURE=1): the engines stay pure Python"; \
	fi
	@touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/parterre demo

# The suite in TEST_WORKERS processes (pytest-xdist; idle ones take tests from a busy one's queue).
# Each test owns its databases, Redis keys or servers and ports (docs/hygiene.md "Running the tests"),
# so several run side by side; three on two cores, since many tests wait on a child process, a
# browser or a clock; TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 3
test: install
	$(BIN)/python -m pytest -q -m "not faults_e2e and not long_e2e" --durations=20 \
	  $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist worksteal)

# The fault-injection end-to-end runs (about 3 minutes): a stage of .ci/run of its own, so that
# `make test` stays under 20 minutes on the 2-core machine.
test-faults: install
	$(BIN)/python -m pytest -q -m faults_e2e

# End-to-end runs of minutes against `parterre up` whose clock the tests cannot move (a competition from
# creation to its frozen final table): a stage of .ci/run of its own, like test-faults.
test-long: install
	$(BIN)/python -m pytest -q -m long_e2e

lint: install
	@status=0; \
	$(BIN)/ruff check . || status=1; \
	$(BIN)/mypy || status=1; \
	exit $$status

bench: install
	$(BIN)/python bench/run_all.py

# Rebuild the compiled engines after editing a module of setup.py COMPILED (needs a C compiler).
compiled: install
	PARTERRE_MYPYC=1 $(BIN)/python -m pip install --quiet --no-build-isolation -e ".[dev]"

protos: install
	$(BIN)/python -m proto.generate

clean:
	rm -rf $(VENV) build *.egg-info *__mypyc*.so
	find games -name '*.cpython-*.so' -delete
