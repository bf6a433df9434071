# Narrator: the handful of obvious targets. `make run` and `make test` are the
# README's two commands; both set up .venv themselves on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000

.PHONY: run test lint format bench rehearse screenshots clean

$(BIN)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

run: $(BIN)/.installed  ## migrate, load the demo chronicle, print join links, serve on the LAN
	$(BIN)/python manage.py evening --port $(PORT)

test: $(BIN)/.installed  ## every test: rules, consumers, admin, browser
	./scripts/test

bench: $(BIN)/.installed  ## load test on loopback: Narrator vs a bare Channels consumer (docs/performance.md)
	$(BIN)/python manage.py bench $(BENCH_ARGS)

rehearse: $(BIN)/.installed  ## a crowded evening played live by simulated phones, to watch on the tablet
	$(BIN)/python manage.py rehearse --port $(PORT) $(REHEARSE_ARGS)

screenshots: $(BIN)/.installed  ## both themes on a 360 px phone and the tablet, into docs/img/ (docs/guide.md)
	NARRATOR_DOCS_SHOTS=1 $(BIN)/python -m pytest tests/browser/test_venue.py -m browser -k screenshots -q

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy --strict challenges/rules

format: $(BIN)/.installed
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) var .pytest_cache .hypothesis
