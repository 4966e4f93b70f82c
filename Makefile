# otpgate — build, test, benchmark.
# `make test` is what CI runs; it installs the Debian packages it needs when they are missing
# (test/setup); redis-server and PostgreSQL need not run: the tests start throw-away instances.

GO          ?= go
GOBIN       ?= $(shell $(GO) env GOPATH)/bin
STATICCHECK := $(GOBIN)/staticcheck
STATICCHECK_VERSION := v0.8.2
PKGS        := ./...
TEST_FLAGS  ?= -race -count=1 -timeout 30m
# Every package but e2e/, whose latency bounds must not share the CPU with the other -race
# packages: `make test` runs it alone, afterwards.
UNIT_PKGS    = $(filter-out %/e2e,$(shell $(GO) list $(PKGS)))

.PHONY: all run build generate setup test twilio-node tokens-node tidy-check lint vet fmt-check staticcheck unit bench loadreport soak fuzz clean

all: lint test

run:
	$(GO) run ./cmd/server

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/otpgate ./cmd/server

## generate: rewrite the API clients in client/ from the OpenAPI documents in api/
## (client's TestGeneratedCodeIsCurrent fails until the result is committed).
generate:
	$(GO) generate ./client/...

## setup: install what the tests need and the machine lacks (Debian packages: redis-server,
## postgresql, chromium, python3-twilio, python3-jwt, npm); see test/setup.
setup:
	./test/setup

## test: set up, lint, then every test (unit, integration against real Redis/Postgres, browser)
## with -race: every package but e2e/, then e2e/ alone. Both runs test the server binary built
## once here. CI=true (the default here; `make test CI=false` to change it) makes a test that
## cannot find or start a service fail instead of skipping.
CI ?= true
test: setup lint build twilio-node tokens-node
	CI=$(CI) OTPGATE_E2E_SERVER=$(CURDIR)/bin/otpgate $(GO) test $(TEST_FLAGS) $(UNIT_PKGS)
	CI=$(CI) OTPGATE_E2E_SERVER=$(CURDIR)/bin/otpgate $(GO) test $(TEST_FLAGS) ./e2e/

lint: fmt-check tidy-check vet staticcheck

## tidy-check: go.mod and go.sum are exactly what `go mod tidy` writes.
tidy-check:
	$(GO) mod tidy -diff

## twilio-node: Twilio's Node helper library, pinned by test/twilio/package-lock.json, installed
## into test/twilio/node_modules (ignored by git) for the conformance test in cmd/server.
twilio-node: test/twilio/node_modules/.installed
test/twilio/node_modules/.installed: test/twilio/package.json test/twilio/package-lock.json | setup
	cd test/twilio && npm ci --no-audit --no-fund --omit=dev
	touch $@

## tokens-node: the jose library, pinned by test/tokens/package-lock.json, installed into
## test/tokens/node_modules (ignored by git) for the token library test in cmd/server.
tokens-node: test/tokens/node_modules/.installed
test/tokens/node_modules/.installed: test/tokens/package.json test/tokens/package-lock.json | setup
	cd test/tokens && npm ci --no-audit --no-fund --omit=dev
	touch $@

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

$(STATICCHECK):
	GOBIN=$(GOBIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) $(PKGS)

## bench: limiter, store and HTTP benchmarks against the local Redis/Postgres, then the load report.
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 -timeout 30m $(PKGS)
	$(MAKE) loadreport

## loadreport: drive the real binary (its defaults: fraud guard on), loadgen's reference server
## and the binary with the guard off side by side with cmd/loadgen, with traffic the guard
## admits, and write docs/load-report.md (see docs/performance.md).
## It uses REDIS_URL / DATABASE_URL when set, else the standard local ports, with a fresh
## database and key prefix that it removes afterwards. LOADGEN_FLAGS adds flags, such as
## LOADGEN_FLAGS='-servers 2 -duration 30s' or LOADGEN_FLAGS='-profile /tmp/prof'.
LOADGEN_FLAGS ?=
loadreport: build
	$(GO) run ./cmd/loadgen -bin bin/otpgate -reference -out docs/load-report.md $(LOADGEN_FLAGS)

## soak: the long version of the end-to-end fault and load proof in e2e/.
soak:
	OTPGATE_SOAK=1 $(GO) test -race -count=1 -timeout 90m -v ./e2e/

## fuzz: run each fuzz target for a while (their seed corpora already run in `make test`).
FUZZTIME ?= 30s
# One "package:target" per fuzz test; `go test -fuzz` takes one target at a time.
FUZZ_TARGETS := \
	./internal/otp/:FuzzParseRules \
	./internal/otp/:FuzzNormalizePhone \
	./internal/http/:FuzzClientIP \
	./internal/http/:FuzzDecodeSend \
	./internal/http/:FuzzDecodeCheck \
	./internal/sms/:FuzzVerifySignature
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name ($$pkg)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

clean:
	rm -rf bin
