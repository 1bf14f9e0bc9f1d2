package agent

import (
	"context"
	"log/slog"
	"net/netip"
	"sync"
	"time"
)

// refusal is why a request was refused, for the log.
type refusal int

const (
	refusedBadCommunity refusal = iota
	refusedUnknownUser
	refusedWrongAuthKey
	refusedWrongPrivKey
	refusedSecurityLevel
	refusedAccess
	refusedUnknownContext
	numRefusals
)

var refusalText = [numRefusals]string{
	refusedBadCommunity:   "unknown community, or not allowed from this source",
	refusedUnknownUser:    "unknown user",
	refusedWrongAuthKey:   "wrong authentication key (password or engine ID)",
	refusedWrongPrivKey:   "wrong privacy key",
	refusedSecurityLevel:  "security level not supported for the user",
	refusedAccess:         "no access (VACM)",
	refusedUnknownContext: "unknown context",
}

// DefaultRefusalLogWindow is how often at most one refusal of each kind is
// logged.
const DefaultRefusalLogWindow = 10 * time.Second

// refusalLog rate-limits the log lines about refused requests: per kind of
// refusal, the first in a window is logged with its source, and the next
// line says how many more there were in between, so that a flood of
// forged requests cannot flood the log.
type refusalLog struct {
	clock      func() time.Time // nil: time.Now; tests set it
	mu         sync.Mutex
	next       [numRefusals]time.Time
	suppressed [numRefusals]int
}

// refused logs a refusal of request from src at info level, unless one of
// the same kind was logged less than the window ago. attrs add detail
// (never a secret: no community strings, no keys).
func (a *Agent) refused(why refusal, src netip.AddrPort, attrs ...slog.Attr) {
	now := time.Now()
	if a.refusals.clock != nil {
		now = a.refusals.clock()
	}
	l := &a.refusals
	l.mu.Lock()
	if now.Before(l.next[why]) {
		l.suppressed[why]++
		l.mu.Unlock()
		return
	}
	window := a.RefusalLogWindow
	if window <= 0 {
		window = DefaultRefusalLogWindow
	}
	l.next[why] = now.Add(window)
	n := l.suppressed[why]
	l.suppressed[why] = 0
	l.mu.Unlock()
	log := a.log()
	if !log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	all := append([]slog.Attr{slog.String("reason", refusalText[why]), slog.String("source", src.String())}, attrs...)
	if n > 0 {
		all = append(all, slog.Int("more_since_last_line", n))
	}
	log.LogAttrs(context.Background(), slog.LevelInfo, "request refused", all...)
}
