package exporter

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

var authProtocols = map[string]usm.AuthProtocol{
	"MD5": usm.AuthMD5, "SHA": usm.AuthSHA1, "SHA224": usm.AuthSHA224, "SHA256": usm.AuthSHA256,
	"SHA384": usm.AuthSHA384, "SHA512": usm.AuthSHA512,
}

var privProtocols = map[string]usm.PrivProtocol{
	"DES": usm.PrivDES, "AES": usm.PrivAES128, "AES192": usm.PrivAES192, "AES256": usm.PrivAES256,
	"AES192C": usm.PrivAES192C, "AES256C": usm.PrivAES256C,
}

// sessionConfig turns an auth entry into a manager configuration.
func sessionConfig(a *Auth, context, engineID string, m *Module) (manager.Config, error) {
	c := manager.Config{Community: a.Community, Timeout: m.Timeout, Retries: *m.Retries, Retransmit: manager.RetransmitAdaptive,
		UnconnectedUDP: m.UseUnconnectedUDP}
	if c.Retries == 0 {
		c.Retries = -1
	}
	switch a.Version {
	case 1:
		c.Version = snmp.V1
	case 2:
		c.Version = snmp.V2c
	default:
		c.Version = snmp.V3
		c.User = a.Username
		c.ContextName = a.ContextName
		if context != "" {
			c.ContextName = context
		}
		if engineID != "" {
			id, err := hex.DecodeString(strings.TrimPrefix(engineID, "0x"))
			if err != nil {
				return c, fmt.Errorf("snmp_engineid %q is not hexadecimal", engineID)
			}
			c.ContextEngineID = id
		}
		switch a.SecurityLevel {
		case "authPriv":
			c.Level = snmp.AuthPriv
			c.PrivProtocol = privProtocols[a.PrivProtocol]
			c.PrivPassword = a.PrivPassword
			fallthrough
		case "authNoPriv":
			if c.Level == 0 {
				c.Level = snmp.AuthNoPriv
			}
			c.AuthProtocol = authProtocols[a.AuthProtocol]
			c.AuthPassword = a.Password
		default:
			c.Level = snmp.NoAuthNoPriv
		}
	}
	return c, nil
}

// normTarget turns snmp_exporter's target forms (host, host:port,
// udp://host:port, tls://host) into tsnmp's (udp:host:port).
func normTarget(t string) string {
	if i := strings.Index(t, "://"); i > 0 {
		return t[:i] + ":" + t[i+3:]
	}
	return t
}

// dial opens a session: over tls:, dtls: and ssh: with the Transport
// Security Model and the auth's certificates or keys, else over udp: or
// tcp: with the auth's community or USM user.
func dial(ctx context.Context, target string, cfg manager.Config, a *Auth) (*manager.Session, error) {
	switch {
	case manager.IsSecureTarget(target):
		if a.TLS == nil {
			return nil, fmt.Errorf("target %s needs an auth with tls: (certificates)", target)
		}
		t, _, err := manager.SecureTarget(target)
		if err != nil {
			return nil, err
		}
		p := manager.TransportParams{OurIdentity: a.TLS.OurIdentity, TheirIdentity: a.TLS.TheirIdentity, TrustCert: a.TLS.TrustCert,
			TheirHostname: a.TLS.TheirHostname, MinVersion: a.TLS.MinVersion, CertDirs: a.TLS.CertDirs, CacheDir: a.TLS.CacheDir, NoResume: a.TLS.NoResume}
		c, err := p.ClientConfig(t.String())
		if err != nil {
			return nil, err
		}
		cfg.Level = snmp.AuthPriv
		return manager.DialSecure(ctx, target, cfg, c)
	case manager.IsSSHTarget(target):
		if a.SSH == nil {
			return nil, fmt.Errorf("target %s needs an auth with ssh: (user and keys)", target)
		}
		t, err := manager.SSHTarget(target)
		if err != nil {
			return nil, err
		}
		p := manager.SSHParams{User: a.SSH.User, IdentityFiles: a.SSH.Identity, Password: a.SSH.Password, KnownHosts: a.SSH.KnownHosts,
			HostKey: a.SSH.HostKey, CacheDir: a.SSH.CacheDir, NoResume: a.SSH.NoResume, NoAgent: true}
		c, err := p.ClientConfig(t.String(), a.Username)
		if err != nil {
			return nil, err
		}
		cfg.Level = snmp.AuthPriv
		return manager.DialSSH(ctx, target, cfg, c)
	}
	if a.TLS != nil || a.SSH != nil {
		return nil, fmt.Errorf("auth with tls: or ssh: used for %s, which is not a tls://, dtls:// or ssh:// target", target)
	}
	return manager.Dial(ctx, target, cfg)
}

// Pool keeps one session per (target, auth and walk parameters) across
// scrapes, closing those idle longer than Idle and the least recently
// used beyond Max. A session a scrape is using is not closed (the pool
// may exceed Max meanwhile).
type Pool struct {
	Idle time.Duration
	Max  int

	mu       sync.Mutex
	sessions map[poolKey]*pooled
	// Dials, Reuses and Evictions count what the pool did.
	Dials, Reuses, Evictions atomic.Int64
}

type pooled struct {
	s     *manager.Session
	used  time.Time
	reps  *repsCap
	users int // scrapes using s now (get, done)
}

// poolKey is what makes two scrapes' sessions interchangeable.
type poolKey struct {
	target                          string
	version                         snmp.Version
	community, user                 string
	level                           snmp.SecurityLevel
	authProto                       usm.AuthProtocol
	authPass                        string
	privProto                       usm.PrivProtocol
	privPass, engineID, contextName string
	timeout                         time.Duration
	retries                         int
	unconnected                     bool
	auth                            *Auth
}

func keyOf(target string, cfg manager.Config, a *Auth) poolKey {
	return poolKey{target, cfg.Version, cfg.Community, cfg.User, cfg.Level, cfg.AuthProtocol, cfg.AuthPassword,
		cfg.PrivProtocol, cfg.PrivPassword, string(cfg.ContextEngineID), cfg.ContextName, cfg.Timeout, cfg.Retries, cfg.UnconnectedUDP, a}
}

// get returns the session for key, dialling one if there is none; the
// caller calls done when it no longer uses it.
func (p *Pool) get(ctx context.Context, key poolKey, cfg manager.Config, a *Auth) (s *manager.Session, cp *repsCap, done func(), err error) {
	target := key.target
	p.mu.Lock()
	if e := p.sessions[key]; e != nil {
		if e.s.Err() == nil {
			e.used = time.Now()
			e.users++
			p.mu.Unlock()
			p.Reuses.Add(1)
			return e.s, e.reps, p.doneFunc(e), nil
		}
		e.s.Close()
		delete(p.sessions, key)
	}
	p.mu.Unlock()
	s, err = dial(ctx, target, cfg, a)
	if err != nil {
		return nil, nil, nil, err
	}
	p.Dials.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sessions == nil {
		p.sessions = map[poolKey]*pooled{}
	}
	if e := p.sessions[key]; e != nil && e.s.Err() == nil {
		// Another scrape dialled meanwhile: keep one.
		s.Close()
		e.used = time.Now()
		e.users++
		return e.s, e.reps, p.doneFunc(e), nil
	}
	e := &pooled{s: s, used: time.Now(), reps: &repsCap{}, users: 1}
	p.sessions[key] = e
	p.expireLocked()
	return s, e.reps, p.doneFunc(e), nil
}

// doneFunc returns the function that ends a scrape's use of e.
func (p *Pool) doneFunc(e *pooled) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			e.users--
			e.used = time.Now()
			p.mu.Unlock()
		})
	}
}

func (p *Pool) expireLocked() {
	now := time.Now()
	for k, e := range p.sessions {
		if p.Idle > 0 && e.users == 0 && now.Sub(e.used) > p.Idle {
			e.s.Close()
			delete(p.sessions, k)
			p.Evictions.Add(1)
		}
	}
	for p.Max > 0 && len(p.sessions) > p.Max {
		var oldK poolKey
		var old *pooled
		for k, e := range p.sessions {
			if e.users == 0 && (old == nil || e.used.Before(old.used)) {
				oldK, old = k, e
			}
		}
		if old == nil {
			return // all in use
		}
		old.s.Close()
		delete(p.sessions, oldK)
		p.Evictions.Add(1)
	}
}

// Expire closes idle sessions; the server calls it periodically.
func (p *Pool) Expire() {
	p.mu.Lock()
	p.expireLocked()
	p.mu.Unlock()
}

// Len is the number of open sessions.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sessions)
}

// Close closes every session.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, e := range p.sessions {
		e.s.Close()
		delete(p.sessions, k)
	}
}

// result is what one module's scrape brought back: the varbinds of
// metrics, and by OID those that lookups and typed strings refer to.
type result struct {
	matches  []match
	pdus     map[string]snmp.VarBind
	returned int
	requests int
}

// match is a varbind of metric m, its row index.
type match struct {
	vb    snmp.VarBind
	m     *Metric
	index snmp.OID
}

// dedupe drops varbinds returned twice (by a get and a walk over it).
func (r *result) dedupe() {
	slices.SortFunc(r.matches, func(a, b match) int { return a.vb.Name.Compare(b.vb.Name) })
	r.matches = slices.CompactFunc(r.matches, func(a, b match) bool { return a.vb.Name.Equal(b.vb.Name) })
}

// collect runs the gets and walks of m on s, subtrees concurrently up to
// walkers at a time.
func collect(ctx context.Context, s *manager.Session, cp *repsCap, m *Module, v1 bool, walkers int, log *slog.Logger) (*result, error) {
	res := &result{pdus: map[string]snmp.VarBind{}, matches: make([]match, 0, m.lastMatches.Load())}
	var mu sync.Mutex
	var ar arena
	tree, refs := m.trees()
	keep := func(vb snmp.VarBind) {
		mt, index := tree.find(vb.Name)
		ref, _ := refs.find(vb.Name)
		mu.Lock()
		res.returned++
		if mt != nil || ref != nil {
			c := snmp.VarBind{Name: ar.oid(vb.Name), Value: snmp.Value{Type: vb.Value.Type, Num: vb.Value.Num, Bytes: ar.bytes(vb.Value.Bytes), OID: ar.oid(vb.Value.OID)}}
			if mt != nil {
				res.matches = append(res.matches, match{c, mt, c.Name[len(c.Name)-len(index):]})
			}
			if ref != nil {
				ar.key = vb.Name.AppendTo(ar.key[:0])
				res.pdus[string(ar.key)] = c
			}
		}
		mu.Unlock()
	}
	walk := func(root string) error {
		oid, _ := parseOID(root)
		n := 0
		st, err := s.WalkWith(ctx, oid, manager.WalkOptions{Bulk: !v1, MaxRepetitions: int(m.MaxRepetitions), NoCheckIncreasing: m.AllowNonIncreasingOIDs, Reuse: true}, func(vb snmp.VarBind) error {
			keep(vb)
			n++
			return nil
		})
		mu.Lock()
		res.requests += st.Requests
		mu.Unlock()
		if err != nil {
			return fmt.Errorf("walk %s: %w", root, err)
		}
		if n == 0 {
			// As gosnmp's walk: an empty subtree may be a scalar named exactly.
			p, err := s.Get(ctx, oid)
			mu.Lock()
			res.requests++
			mu.Unlock()
			if err == nil && len(p.VarBinds) == 1 && !p.VarBinds[0].Value.Type.IsException() && p.VarBinds[0].Value.Type != snmp.Null {
				keep(p.VarBinds[0])
			}
		}
		return nil
	}

	gets := append([]string(nil), m.Get...)
	walks := append([]string(nil), m.Walk...)
	allowed := map[string][]string{}
	var filtered []string
	for _, f := range m.Filters {
		var list []string
		oid, _ := parseOID(f.Oid)
		_, err := s.WalkWith(ctx, oid, manager.WalkOptions{Bulk: !v1, MaxRepetitions: int(m.MaxRepetitions)}, func(vb snmp.VarBind) error {
			v := vb.Value
			for _, re := range f.res {
				if re.MatchString(valueString(&v, "DisplayString", "")) {
					list = append(list, strconv.FormatUint(uint64(vb.Name[len(vb.Name)-1]), 10))
					break
				}
			}
			return nil
		})
		if err != nil {
			log.Info("filter walk failed, not filtering", "oid", f.Oid, "err", err)
			continue
		}
		var w []string
		for _, e := range walks {
			if !contains(f.Targets, e) {
				w = append(w, e)
			}
		}
		walks = w
		for _, t := range f.Targets {
			if old, ok := allowed[t]; ok {
				var both []string
				for _, x := range old {
					if contains(list, x) {
						both = append(both, x)
					}
				}
				allowed[t] = both
			} else {
				filtered = append(filtered, t)
				allowed[t] = list
			}
		}
	}
	for _, t := range filtered {
		var g []string
		for _, e := range gets {
			if !strings.HasPrefix(e, t) {
				g = append(g, e)
			}
		}
		for _, ix := range allowed[t] {
			g = append(g, t+"."+ix)
		}
		gets = g
	}

	per := int(m.MaxRepetitions)
	if per == 0 || v1 {
		per = 1
	}
	for len(gets) > 0 {
		n := min(per, len(gets))
		oids := make([]snmp.OID, n)
		for i, g := range gets[:n] {
			oids[i], _ = parseOID(g)
		}
		p, err := s.Get(ctx, oids...)
		res.requests++
		var se *manager.StatusError
		if v1 && errors.As(err, &se) && p != nil && p.ErrorStatus == snmp.NoSuchName {
			gets = gets[n:]
			continue
		}
		if err != nil {
			return res, fmt.Errorf("get: %w", err)
		}
		for _, vb := range p.VarBinds {
			if !vb.Value.Type.IsException() {
				keep(vb)
			}
		}
		gets = gets[n:]
	}

	if walkers < 1 {
		walkers = 1
	}
	if !v1 && len(walks) > 0 {
		// Subtrees walked side by side share their GetBulk requests.
		roots := make([]snmp.OID, len(walks))
		for i, w := range walks {
			roots[i], _ = parseOID(w)
		}
		n, found, err := bulkWalk(ctx, s, roots, walkers, int(m.MaxRepetitions), cp, m.AllowNonIncreasingOIDs, keep)
		res.requests += n
		if err != nil {
			return res, fmt.Errorf("walk: %w", err)
		}
		for i, ok := range found {
			if !ok {
				// As gosnmp's walk: an empty subtree may be a scalar named exactly.
				p, err := s.Get(ctx, roots[i])
				res.requests++
				if err == nil && len(p.VarBinds) == 1 && !p.VarBinds[0].Value.Type.IsException() && p.VarBinds[0].Value.Type != snmp.Null {
					keep(p.VarBinds[0])
				}
			}
		}
		walks = nil
	}
	sem := make(chan struct{}, walkers)
	errc := make(chan error, len(walks))
	var wg sync.WaitGroup
	for _, w := range walks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := walk(w); err != nil {
				errc <- err
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return res, err
	}
	if m.overlap {
		res.dedupe()
	}
	m.lastMatches.Store(int64(len(res.matches)))
	return res, nil
}

// arena copies the OIDs and strings of a scrape's varbinds into a few
// large blocks instead of one allocation each.
type arena struct {
	oids []uint32
	b    []byte
	key  []byte
}

func (a *arena) oid(o snmp.OID) snmp.OID {
	if o == nil {
		return nil
	}
	if cap(a.oids)-len(a.oids) < len(o) {
		a.oids = make([]uint32, 0, max(2048, len(o)))
	}
	n := len(a.oids)
	a.oids = append(a.oids, o...)
	return a.oids[n:len(a.oids):len(a.oids)]
}

func (a *arena) bytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	if cap(a.b)-len(a.b) < len(b) {
		a.b = make([]byte, 0, max(4096, len(b)))
	}
	n := len(a.b)
	a.b = append(a.b, b...)
	return a.b[n:len(a.b):len(a.b)]
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
