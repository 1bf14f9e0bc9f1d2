# tsnmp: build, demo, test.
GO      ?= go
BIN     := bin
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build demo test deps lint unit fuzz-smoke bench clean install deb

all: build

# Static binaries, as make install builds them: a tsnmp get that loads
# no C library starts about 0.7 ms sooner (docs/benchmarks.md, get).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

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
	@# 32-bit platforms (routers), tests included: ARM, and MIPS, whose
	@# stat has 32-bit device numbers. About half a minute each.
	GOOS=linux GOARCH=arm $(GO) vet ./...
	GOOS=linux GOARCH=mips $(GO) vet ./...

unit:
	$(GO) test -race -count=1 -timeout 25m ./...

# A short run of every fuzz target beyond its seed corpus.
fuzz-smoke:
	./scripts/fuzz-smoke.sh 10s

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf $(BIN)

# Installation: binaries, systemd units, example configuration, man pages
# and the docs. PREFIX=/usr puts the configuration in /etc and the units
# in /usr/lib/systemd/system.
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR    ?= $(PREFIX)/lib/systemd/system
DOCDIR     ?= $(PREFIX)/share/doc/tsnmp
MANDIR     ?= $(PREFIX)/share/man
STATEDIR   ?= /var/lib

install:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/install/ ./cmd/tsnmpd ./cmd/tsnmp
	install -D -m 0755 $(BIN)/install/tsnmpd $(DESTDIR)$(SBINDIR)/tsnmpd
	install -D -m 0755 $(BIN)/install/tsnmp $(DESTDIR)$(BINDIR)/tsnmp
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/tsnmp $(DESTDIR)$(DOCDIR)
	for u in tsnmpd.service tsnmp-trapd.service; do \
		sed -e 's|/usr/sbin/tsnmpd|$(SBINDIR)/tsnmpd|g' -e 's|/usr/bin/tsnmp |$(BINDIR)/tsnmp |g' \
		    -e 's|/etc/tsnmp/|$(SYSCONFDIR)/tsnmp/|g' -e 's|/usr/share/doc/tsnmp/|$(DOCDIR)/|g' \
		    dist/systemd/$$u > $(DESTDIR)$(UNITDIR)/$$u; chmod 0644 $(DESTDIR)$(UNITDIR)/$$u; done
	for c in tsnmpd.yaml snmptrapd.conf; do \
		[ -e $(DESTDIR)$(SYSCONFDIR)/tsnmp/$$c ] || install -m 0644 dist/$$c $(DESTDIR)$(SYSCONFDIR)/tsnmp/$$c; done
	install -m 0644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	for m in dist/man/*.[158]; do \
		install -D -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/}; done
	install -D -m 0644 dist/completion/tsnmp.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/tsnmp
	install -D -m 0644 dist/completion/_tsnmp $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_tsnmp

# A Debian package (dpkg-deb) of what install puts under /usr and /etc.
DEBVERSION := 0.0+git$(shell git log -1 --format=%cd.%h --date=format:%Y%m%d%H%M%S 2>/dev/null || echo 0)
DEBARCH    := $(shell dpkg --print-architecture 2>/dev/null || $(GO) env GOARCH)
DEBROOT    ?= $(BIN)/deb/root
DEB        ?= $(BIN)/tsnmp_$(DEBVERSION)_$(DEBARCH).deb

deb:
	rm -rf $(DEBROOT)
	$(MAKE) install PREFIX=/usr DESTDIR=$(abspath $(DEBROOT))
	gzip -9n $(DEBROOT)/usr/share/man/man*/*
	install -d $(DEBROOT)/DEBIAN
	sed -e 's|@VERSION@|$(DEBVERSION)|' -e 's|@ARCH@|$(DEBARCH)|' dist/debian/control.in > $(DEBROOT)/DEBIAN/control
	install -m 0644 dist/debian/conffiles $(DEBROOT)/DEBIAN/conffiles
	install -m 0755 dist/debian/postinst dist/debian/prerm dist/debian/postrm $(DEBROOT)/DEBIAN/
	dpkg-deb --root-owner-group -Zxz --build $(DEBROOT) $(DEB)
	@echo built $(DEB)
