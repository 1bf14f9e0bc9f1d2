package agent

import (
	"net/netip"
	"sync"
	"time"
)

// RateLimitConfig configures a per-source response rate limit for UDP,
// modelled on DNS servers' response rate limiting (RRL): each source
// prefix has a token bucket; a message that finds it empty is dropped,
// except every Slip-th, which is answered with a small error response so
// that a real manager behind a forged flood still sees an answer while
// the flood is not amplified.
type RateLimitConfig struct {
	// Rate is the responses per second allowed to one source prefix.
	Rate float64
	// Burst is the bucket size (0: Rate, at least 1).
	Burst int
	// Slip sends every Slip-th limited response as a slip; 0 sends none.
	Slip int
	// IPv4Prefix and IPv6Prefix are the prefix lengths that group sources
	// (0: 24 and 56, as DNS RRL's defaults).
	IPv4Prefix, IPv6Prefix int
	// MaxSources bounds the buckets kept (0: 65536); when full, idle
	// buckets are forgotten first.
	MaxSources int
}

// RateLimiter is a per-source-prefix token bucket limiter. It is safe for
// concurrent use.
type RateLimiter struct {
	cfg RateLimitConfig

	mu      sync.Mutex
	buckets map[netip.Prefix]*bucket
}

type bucket struct {
	tokens  float64
	last    time.Time
	limited int // messages limited since the bucket last had a token
}

// NewRateLimiter returns a limiter for cfg, or nil when cfg.Rate is not
// positive (no limit).
func NewRateLimiter(cfg RateLimitConfig) *RateLimiter {
	if cfg.Rate <= 0 {
		return nil
	}
	if cfg.Burst <= 0 {
		cfg.Burst = max(int(cfg.Rate), 1)
	}
	if cfg.IPv4Prefix <= 0 || cfg.IPv4Prefix > 32 {
		cfg.IPv4Prefix = 24
	}
	if cfg.IPv6Prefix <= 0 || cfg.IPv6Prefix > 128 {
		cfg.IPv6Prefix = 56
	}
	if cfg.MaxSources <= 0 {
		cfg.MaxSources = 65536
	}
	return &RateLimiter{cfg: cfg, buckets: make(map[netip.Prefix]*bucket)}
}

// Config returns the limiter's configuration with its defaults applied.
func (l *RateLimiter) Config() RateLimitConfig { return l.cfg }

// Allow takes a token for a response to from at now. When there is none
// it returns ok=false, and slip=true when this limited response is to be
// sent as a slip.
func (l *RateLimiter) Allow(from netip.Addr, now time.Time) (ok, slip bool) {
	from = from.Unmap()
	bits := l.cfg.IPv6Prefix
	if from.Is4() {
		bits = l.cfg.IPv4Prefix
	}
	key, err := from.Prefix(bits)
	if err != nil {
		return true, false // not an IP address: nothing to key on
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.cfg.MaxSources {
			l.sweep(now)
		}
		b = &bucket{tokens: float64(l.cfg.Burst), last: now}
		l.buckets[key] = b
	}
	if el := now.Sub(b.last); el > 0 {
		b.tokens = min(b.tokens+el.Seconds()*l.cfg.Rate, float64(l.cfg.Burst))
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		b.limited = 0
		return true, false
	}
	b.limited++
	return false, l.cfg.Slip > 0 && b.limited%l.cfg.Slip == 0
}

// sweep forgets the buckets that have refilled (their sources are idle);
// if none has, it forgets them all, which can only let more through.
func (l *RateLimiter) sweep(now time.Time) {
	full := time.Duration(float64(l.cfg.Burst) / l.cfg.Rate * float64(time.Second))
	for k, b := range l.buckets {
		if now.Sub(b.last) >= full {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= l.cfg.MaxSources {
		clear(l.buckets)
	}
}
