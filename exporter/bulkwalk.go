package exporter

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/tsnmp/tsnmp/manager"
	"github.com/tsnmp/tsnmp/snmp"
)

// repsCap is what a target is known to take: the most varbinds worth
// asking for in one GetBulk response, 0 if nothing is known. It shrinks
// when the target answers tooBig, lets a large request go unanswered or
// cuts its responses short, and grows back (doubling) after scrapes
// without trouble. The repetitions asked for never exceed the module's
// max_repetitions.
type repsCap struct {
	v  atomic.Int32
	ok atomic.Int32 // scrapes without trouble since the last change
}

// growAfter is the number of scrapes without trouble after which a
// target is asked for twice as many varbinds again.
const growAfter = 16

// effective is the repetitions to ask for for n subtrees under the
// module's maximum.
func (c *repsCap) effective(maxReps, n int) int {
	if v := int(c.v.Load()); v > 0 && v/n < maxReps {
		return max(v/n, 1)
	}
	return maxReps
}

// shrink records that total varbinds were too many.
func (c *repsCap) shrink(total int) {
	c.v.Store(int32(max(total/2, 1)))
	c.ok.Store(0)
}

// fit records that the target returned at most total varbinds.
func (c *repsCap) fit(total int) {
	c.v.Store(int32(max(total, 1)))
	c.ok.Store(0)
}

// grow counts a scrape without trouble whose requests could ask for up to
// limit varbinds, and after growAfter of them lets the next scrape ask
// for twice what worked. A scrape that could not reach what is known
// (limit at most that) proves nothing about larger requests: the cap is
// the target's, shared by the modules walked over its session, and one
// with a small max_repetitions must not lift it for the others.
func (c *repsCap) grow(limit int) {
	v := int(c.v.Load())
	if v == 0 || limit <= v || c.ok.Add(1) < growAfter {
		return
	}
	c.ok.Store(0)
	c.v.Store(int32(min(v*2, math.MaxInt32)))
}

// bulkWalk walks the subtrees under roots together: each GetBulk asks
// for the next names of up to width unfinished subtrees (fewer if the
// target takes fewer varbinds), reps
// repetitions each, so that subtrees walked side by side share requests.
// fn receives every varbind inside its subtree (valid until fn returns).
// It returns the requests sent and, for each root, whether it yielded
// anything.
func bulkWalk(ctx context.Context, s *manager.Session, roots []snmp.OID, width, maxReps int, cp *repsCap, noCheckIncreasing bool, fn func(snmp.VarBind)) (int, []bool, error) {
	if width < 1 {
		width = 1
	}
	troubled, answered := false, false
	tooBigs := 0
	losses, probe := 0, 0 // unanswered large requests; the size to learn once the probe is answered
	truncated := 0
	found := make([]bool, len(roots))
	last := make([]snmp.OID, len(roots)) // copies: into is reused
	for i, r := range roots {
		last[i] = append(snmp.OID(nil), r...)
	}
	var active, waiting []int // subtrees in the requests, and held back
	next := 0
	into := new(snmp.PDU)
	pdu := &snmp.PDU{Type: snmp.GetBulkRequest}
	requests := 0
	const maxRequests = 1 << 24
	for requests < maxRequests {
		// A target that takes fewer varbinds than there are subtrees
		// gets fewer subtrees per request; the rest wait their turn.
		w := width
		if v := int(cp.v.Load()); v > 0 && v < w {
			w = v
		}
		if len(active) > w {
			waiting = append(slices.Clone(active[w:]), waiting...)
			active = active[:w]
		}
		for len(active) < w && (len(waiting) > 0 || next < len(roots)) {
			if len(waiting) > 0 {
				active, waiting = append(active, waiting[0]), waiting[1:]
			} else {
				active = append(active, next)
				next++
			}
		}
		if len(active) == 0 {
			break
		}
		reps := cp.effective(maxReps, len(active))
		if probe > 0 {
			reps = 1
		}
		pdu.ErrorIndex = reps
		pdu.VarBinds = pdu.VarBinds[:0]
		for _, r := range active {
			pdu.VarBinds = append(pdu.VarBinds, snmp.VarBind{Name: last[r], Value: snmp.NullValue()})
		}
		requests++
		resp, err := s.DoInto(ctx, pdu, into)
		if err != nil {
			var se *manager.StatusError
			tooBig := errors.As(err, &se) && se.Status == snmp.TooBig
			if tooBig && tooBigs < 16 && reps*len(active) > 1 {
				tooBigs++
				troubled = true
				cp.shrink(reps * len(active))
				continue
			}
			// A large request left unanswered: if the target has
			// answered in this walk, its limit is halved; if not, one
			// repetition per subtree probes whether it answers at all,
			// and only then is half the lost size learned (a target
			// that answers nothing keeps what it had). At most four
			// such retries in a walk.
			if errors.Is(err, manager.ErrTimeout) && ctx.Err() == nil && losses < 4 && reps*len(active) > len(active) {
				losses++
				troubled = true
				if answered {
					cp.shrink(reps * len(active))
				} else if probe == 0 {
					probe = max(reps*len(active)/2, 1)
				}
				continue
			}
			return requests, found, err
		}
		if probe > 0 {
			cp.fit(probe)
			probe = 0
		}
		answered = true
		n := len(active)
		if len(resp.VarBinds) == 0 {
			break
		}
		if len(resp.VarBinds) < n*reps && len(resp.VarBinds) > 0 {
			// Cut short: ask for no more than the target gives. (The
			// last response of a walk may be short for want of data:
			// it is followed by a response cut short only if the
			// subtrees go on.)
			truncated = len(resp.VarBinds)
		}
		done := make([]bool, n)
		for i := range resp.VarBinds {
			k := i % n
			if done[k] {
				continue
			}
			r := active[k]
			vb := &resp.VarBinds[i]
			if vb.Value.Type.IsException() || !vb.Name.HasPrefix(roots[r]) {
				done[k] = true
				continue
			}
			if !noCheckIncreasing && vb.Name.Compare(last[r]) <= 0 {
				return requests, found, fmt.Errorf("walk %v: %w", roots[r], &manager.NotIncreasingError{Prev: last[r].Clone(), Next: vb.Name.Clone()})
			}
			found[r] = true
			fn(*vb)
			last[r] = append(last[r][:0], vb.Name...)
		}
		kept := active[:0]
		for k, r := range active {
			if !done[k] {
				kept = append(kept, r)
			}
		}
		if truncated > 0 && len(kept) > 0 {
			cp.fit(truncated)
			troubled = true
		}
		truncated = 0
		active = kept
	}
	if requests >= maxRequests {
		return requests, found, errors.New("walk request limit reached")
	}
	if !troubled {
		cp.grow(maxReps * width)
	}
	return requests, found, nil
}
