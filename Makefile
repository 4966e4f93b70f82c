# otpgate — build, test, benchmark.
# `make test` is what CI runs; it needs redis-server and PostgreSQL on the machine
# (running or not: the tests start throw-away instances when none answers).

GO          ?= go
GOBIN       ?= $(shell $(GO) env GOPATH)/bin
STATICCHECK := $(GOBIN)/staticcheck
STATICCHECK_VERSION := v0.8.2
PKGS        := ./...
TEST_FLAGS  ?= -race -count=1 -timeout 30m

.PHONY: all run build test lint vet fmt-check staticcheck unit bench soak fuzz clean

all: lint test

run:
	$(GO) run ./cmd/server

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/otpgate ./cmd/server

## test: lint, then every test (unit, integration against real Redis/Postgres, browser) with -race.
test: lint
	$(GO) test $(TEST_FLAGS) $(PKGS)

lint: fmt-check vet staticcheck

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

$(STATICCHECK):
	GOBIN=$(GOBIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) $(PKGS)

## bench: limiter, store and HTTP benchmarks against the local Redis/Postgres.
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 -timeout 30m $(PKGS)

## fuzz: run each fuzz target for a while (their seed corpora already run in `make test`).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseRules$$' -fuzztime $(FUZZTIME) ./internal/ratelimit/
	$(GO) test -run '^$$' -fuzz '^FuzzNormalizePhone$$' -fuzztime $(FUZZTIME) ./internal/otp/

clean:
	rm -rf bin
