# tsnmp: build, demo, test.
GO      ?= go
BIN     := bin
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build demo test deps lint unit fuzz-smoke bench clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

# Start tsnmpd with the zero-config default in a temporary state directory,
# walk it with tsnmp over v2c and over SNMPv3 with the generated user, stop.
demo: build
	./scripts/demo.sh

# Everything CI checks. deps installs the linters and (as root) the
# interoperability peers; it says what to run when it cannot.
test: deps lint unit

deps:
	@./scripts/test-deps.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck ./...

unit:
	$(GO) test -race -count=1 -timeout 20m ./...

# A short run of every fuzz target beyond its seed corpus.
fuzz-smoke:
	./scripts/fuzz-smoke.sh 10s

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf $(BIN)
