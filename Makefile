# otpgate — build, test, benchmark.
# `make test` is what CI runs; it installs the Debian packages it needs when they are missing
# (test/setup); redis-server and PostgreSQL need not run: the tests start throw-away instances.

GO          ?= go
GOBIN       ?= $(shell $(GO) env GOPATH)/bin
STATICCHECK := $(GOBIN)/staticcheck
STATICCHECK_VERSION := v0.8.2
PKGS        := ./...
TEST_FLAGS  ?= -race -count=1 -timeout 30m
# Every package but e2e/ and internal/loadtest/pumping, whose latency bounds and timed
# simulations must not share the CPU with the other -race packages: `make test` runs each
# alone, afterwards.
ALONE_PKGS   = %/e2e %/internal/loadtest/pumping
UNIT_PKGS    = $(filter-out $(ALONE_PKGS),$(shell $(GO) list $(PKGS)))

.PHONY: all run build generate setup test twilio-node tokens-node web-node web tidy-check lint vet fmt-check staticcheck quick bench loadreport soak fuzz clean deploy-test deploy-tools deploy-schemas deploy-manifests

all: lint test

run:
	$(GO) run ./cmd/server

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/otpgate ./cmd/server

## generate: rewrite the API clients in client/ and web/client/ from the OpenAPI documents in
## api/ (client's TestGeneratedCodeIsCurrent and web/client's npm test fail until the result is
## committed).
generate: web-node
	$(GO) generate ./client/...
	cd web && npm run generate

## setup: install what the tests need and the machine lacks (Debian packages: redis-server,
## postgresql, chromium, python3-twilio, python3-jwt, npm); see test/setup.
setup:
	./test/setup

## test: set up, lint, then every test (unit, integration against real Redis/Postgres, browser)
## with -race: every package but e2e/ and internal/loadtest/pumping, then the pumping
## simulation alone, then e2e/ alone. Every run tests the server binary built once here. CI=true (the default here; `make test CI=false` to change it) makes a test that
## cannot find or start a service fail instead of skipping.
CI ?= true
test: setup lint build twilio-node tokens-node web-node deploy-test
	cd web && npm test
	CI=$(CI) OTPGATE_E2E_SERVER=$(CURDIR)/bin/otpgate $(GO) test $(TEST_FLAGS) $(UNIT_PKGS)
	CI=$(CI) OTPGATE_E2E_SERVER=$(CURDIR)/bin/otpgate $(GO) test $(TEST_FLAGS) ./internal/loadtest/pumping/
	CI=$(CI) OTPGATE_E2E_SERVER=$(CURDIR)/bin/otpgate $(GO) test $(TEST_FLAGS) ./e2e/

## quick: the tests that need no service (no Redis, PostgreSQL, browser or server binary; those
## are skipped, whatever CI says), without -race: a minute's check while editing. `make test`
## is the whole suite.
quick:
	OTPGATE_TEST_OFFLINE=1 CI=false $(GO) test -count=1 $(PKGS)

lint: fmt-check tidy-check vet staticcheck

## tidy-check: go.mod and go.sum are exactly what `go mod tidy` writes.
tidy-check:
	$(GO) mod tidy -diff

## twilio-node: Twilio's Node helper library, pinned by test/twilio/package-lock.json, installed
## into test/twilio/node_modules (ignored by git) for the conformance tests in test/conformance.
twilio-node: test/twilio/node_modules/.installed
test/twilio/node_modules/.installed: test/twilio/package.json test/twilio/package-lock.json | setup
	cd test/twilio && npm ci --no-audit --no-fund --omit=dev
	touch $@

## web-node: the npm packages of web/ (the TypeScript client, the web component and their
## build tools), pinned by web/package-lock.json, installed into web/node_modules (ignored by
## git). Go needs none of them: the built component is committed and embedded.
web-node: web/node_modules/.installed
web/node_modules/.installed: web/package.json web/client/package.json web/component/package.json web/package-lock.json | setup
	cd web && npm ci --no-audit --no-fund
	touch $@

## web: rebuild the web component into internal/web/static/otpgate-verify.js, which the server
## embeds (internal/web's TestBundleIsCurrent fails until the result is committed).
web: web-node
	cd web && npm run build

## tokens-node: the jose library, pinned by test/tokens/package-lock.json, installed into
## test/tokens/node_modules (ignored by git) for the token library test in test/conformance.
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

## deploy-test: the Helm chart, the manifests rendered from it and the monitoring mixin
## (deploy/, a module of its own, so the server's go.mod takes no Kubernetes or Prometheus
## dependencies): helm lint and template, strict decoding into the Kubernetes API types,
## validation against the Kubernetes and ServiceMonitor OpenAPI schemas, promtool check
## and test rules, and every query checked against the /metrics of bin/otpgate
## (docs/operations.md#tests).
HELM_VERSION           := v3.22.1
PROMTOOL_VERSION       := v0.316.0
CONTROLLER_GEN_VERSION := v0.23.0
TOOLS                  := $(CURDIR)/bin/tools
HELM                   := $(TOOLS)/helm-$(HELM_VERSION)/helm
PROMTOOL               := $(TOOLS)/promtool-$(PROMTOOL_VERSION)/promtool
CONTROLLER_GEN         := $(TOOLS)/controller-gen-$(CONTROLLER_GEN_VERSION)/controller-gen
KUBE_SCHEMAS           := $(TOOLS)/kube-schemas.json
deploy-test: deploy-tools deploy-schemas build $(STATICCHECK)
	cd deploy && $(GO) mod tidy -diff && $(GO) vet ./... && $(STATICCHECK) ./...
	cd deploy && CI=$(CI) HELM=$(HELM) PROMTOOL=$(PROMTOOL) KUBE_SCHEMAS=$(KUBE_SCHEMAS) \
		OTPGATE_E2E_SERVER=$(CURDIR)/bin/otpgate $(GO) test -count=1 ./...

## deploy-tools: helm, promtool and controller-gen at the pinned versions, built with go
## install into bin/tools.
deploy-tools: $(HELM) $(PROMTOOL) $(CONTROLLER_GEN)
$(HELM):
	GOBIN=$(dir $@) $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
# remove_all_sd (Prometheus's own build tag) leaves out the cloud service discoveries,
# which promtool's rule commands do not use and which take most of its build time.
$(PROMTOOL):
	GOBIN=$(dir $@) $(GO) install -tags remove_all_sd github.com/prometheus/prometheus/cmd/promtool@$(PROMTOOL_VERSION)

$(CONTROLLER_GEN):
	GOBIN=$(dir $@) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

## deploy-schemas: the OpenAPI schemas of the kinds the chart renders, for the Kubernetes
## release of k8s.io/api and the Prometheus Operator that deploy/go.mod pins, written by
## deploy/schemagen into bin/tools from the Go modules (not kept in the repository); made
## again when go.mod or the generator changes (docs/operations.md#tests).
deploy-schemas: $(KUBE_SCHEMAS)
$(KUBE_SCHEMAS): deploy/go.mod $(wildcard deploy/schemagen/*.go) $(CONTROLLER_GEN)
	cd deploy && $(GO) run ./schemagen -go $(GO) -controller-gen $(CONTROLLER_GEN) -out $@

## deploy-manifests: render deploy/kubernetes/otpgate.yaml again from the chart's defaults.
deploy-manifests: $(HELM) deploy-schemas
	cd deploy && HELM=$(HELM) KUBE_SCHEMAS=$(KUBE_SCHEMAS) $(GO) test -count=1 -run '^TestKubernetesManifestIsCurrent$$' . -args -update

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
