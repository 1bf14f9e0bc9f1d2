package manager

import (
	"sync"
	"time"
)

// rtoEstimator is the adaptive retransmission timer of one target: the
// smoothed round-trip time and its variation per RFC 6298, with Karn's
// rule (callers only sample exchanges that were not retransmitted) and
// exponential backoff on timeout, bounded by [min, max].
type rtoEstimator struct {
	mu           sync.Mutex
	srtt, rttvar time.Duration
	rto          time.Duration
	min, max     time.Duration
	sampled      bool
}

func newRTOEstimator(initial, lo, hi time.Duration) *rtoEstimator {
	e := &rtoEstimator{min: lo, max: hi}
	e.rto = e.clamp(initial)
	return e
}

func (e *rtoEstimator) clamp(d time.Duration) time.Duration {
	return max(e.min, min(e.max, d))
}

// RTO returns the current retransmission timeout.
func (e *rtoEstimator) RTO() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rto
}

// Sample records a round-trip time measured on an exchange that was sent
// exactly once (Karn's rule).
func (e *rtoEstimator) Sample(r time.Duration) {
	if r <= 0 {
		r = time.Microsecond
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	const alpha, beta = 8, 4 // 1/8 and 1/4 as integer divisors
	if !e.sampled {
		e.srtt, e.rttvar, e.sampled = r, r/2, true
	} else {
		d := e.srtt - r
		if d < 0 {
			d = -d
		}
		e.rttvar += (d - e.rttvar) / beta
		e.srtt += (r - e.srtt) / alpha
	}
	// RFC 6298 (2.3): RTO = SRTT + max(G, K*RTTVAR); G is taken as 1ms.
	e.rto = e.clamp(e.srtt + max(time.Millisecond, 4*e.rttvar))
}

// Backoff doubles the timeout after a retransmission timer expired
// (RFC 6298 (5.5)) and returns the new value.
func (e *rtoEstimator) Backoff() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rto = e.clamp(2 * e.rto)
	return e.rto
}

// State returns the smoothed RTT, its variation and the current timeout.
func (e *rtoEstimator) State() (srtt, rttvar, rto time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.srtt, e.rttvar, e.rto
}
