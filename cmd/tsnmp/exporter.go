package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"

	"github.com/tsnmp/tsnmp/exporter"
	"github.com/tsnmp/tsnmp/internal/idlegc"
)

func init() { subcommands["exporter"] = exporterMain }

type multiFlag []string

func (m *multiFlag) String() string     { return fmt.Sprint(*m) }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// webConfig is the part of the exporter-toolkit's web configuration file
// that tsnmp exporter reads: TLS server certificate and basic auth users
// with bcrypt password hashes.
type webConfig struct {
	TLSServerConfig struct {
		CertFile string `yaml:"cert_file"`
		KeyFile  string `yaml:"key_file"`
	} `yaml:"tls_server_config"`
	BasicAuthUsers map[string]string `yaml:"basic_auth_users"`
}

// tsnmp exporter [--config.file F]... [--web.listen-address A]
// [--web.config.file F] [--snmp.module-concurrency N]: Prometheus's
// snmp_exporter interface (docs/exporter.md).
func exporterMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tsnmp exporter", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var files multiFlag
	fs.Var(&files, "config.file", "snmp.yml to load (repeatable, globs; default snmp.yml)")
	listen := fs.String("web.listen-address", ":9116", "address to listen on")
	webFile := fs.String("web.config.file", "", "TLS and basic auth configuration (exporter-toolkit format)")
	modConc := fs.Int("snmp.module-concurrency", 1, "modules of one scrape run at once")
	walkConc := fs.Int("snmp.walk-concurrency", 4, "subtrees of one module walked together per target (in one GetBulk request; concurrent GetNext walks over SNMPv1)")
	idle := fs.Duration("snmp.session-idle", 5*time.Minute, "close pooled sessions idle this long")
	maxSess := fs.Int("snmp.max-sessions", 10000, "most pooled sessions")
	walkCache := fs.Duration("snmp.walk-cache", 0, "share a walk among scrapes of the same target and module for this long (0: no sharing)")
	offset := fs.Duration("timeout-offset", 500*time.Millisecond, "taken from the scrape timeout Prometheus sends (X-Prometheus-Scrape-Timeout-Seconds)")
	level := fs.String("log.level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if len(files) == 0 {
		files = multiFlag{"snmp.yml"}
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(stderr, "tsnmp exporter: --log.level %q: %v\n", *level, err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv}))
	e := &exporter.Exporter{ConfigFiles: files, ModuleConcurrency: *modConc, WalkConcurrency: *walkConc,
		Pool: &exporter.Pool{Idle: *idle, Max: *maxSess}, Logger: log, WalkCache: *walkCache, TimeoutOffset: *offset}
	if err := e.Reload(); err != nil {
		fmt.Fprintf(stderr, "tsnmp exporter: %v\n", err)
		return 1
	}
	defer e.Pool.Close()
	h := e.Handler()
	var wc webConfig
	if *webFile != "" {
		b, err := os.ReadFile(*webFile)
		if err == nil {
			d := yaml.NewDecoder(bytes.NewReader(b))
			d.KnownFields(true)
			err = d.Decode(&wc)
			if errors.Is(err, io.EOF) {
				err = nil
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "tsnmp exporter: --web.config.file %s: %v\n", *webFile, err)
			return 1
		}
		if len(wc.BasicAuthUsers) > 0 {
			h = basicAuth(wc.BasicAuthUsers, h)
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "tsnmp exporter: %v\n", err)
		return 1
	}
	log.Info("listening", "address", ln.Addr().String())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	go func() {
		for {
			select {
			case <-ctx.Done():
				srv.Close()
				return
			case <-hup:
				if err := e.Reload(); err != nil {
					log.Error("reload failed; the previous configuration stays", "err", err)
				} else {
					log.Info("configuration reloaded")
				}
			case <-tick.C:
				e.Pool.Expire()
			}
		}
	}()
	go idlegc.Run(ctx)
	if wc.TLSServerConfig.CertFile != "" {
		err = srv.ServeTLS(ln, wc.TLSServerConfig.CertFile, wc.TLSServerConfig.KeyFile)
	} else {
		err = srv.Serve(ln)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "tsnmp exporter: %v\n", err)
		return 1
	}
	return 0
}

func basicAuth(users map[string]string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		hash, known := users[u]
		if !ok || !known || bcrypt.CompareHashAndPassword([]byte(hash), []byte(p)) != nil {
			w.Header().Set("WWW-Authenticate", `Basic realm="tsnmp exporter"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
