module github.com/tsnmp/tsnmp

go 1.26.0

require (
	github.com/chromedp/cdproto v0.159.3
	github.com/chromedp/chromedp v0.23.0
	github.com/coreos/go-systemd/v22 v22.7.0
	github.com/klauspost/compress v1.20.3
	github.com/lestrrat-go/strftime v1.2.0
	github.com/mdlayher/netlink v1.7.2
	github.com/pion/dtls/v3 v3.1.15
	github.com/pion/transport/v5 v5.0.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/crypto v0.58.0
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
	golang.org/x/net v0.60.0
	golang.org/x/sys v0.49.0
)

require (
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/google/go-cmp v0.6.0 // indirect
	github.com/josharian/native v1.1.0 // indirect
	github.com/mdlayher/socket v0.4.1 // indirect
	github.com/pion/logging v0.2.4 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
