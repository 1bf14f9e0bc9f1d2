package exporter

import (
	"context"
	"errors"
	"sync"
	"time"
)

// walkKey names a walk that scrapes can share: the same session settings
// and the same module (of the same configuration: a reload makes new
// modules).
type walkKey struct {
	pool   poolKey
	module *Module
}

type walkEntry struct {
	done    chan struct{}
	res     *result
	retried int64
	err     error
	at      time.Time
}

// walkCache lets concurrent scrapes of the same target and module share
// one walk, and later scrapes reuse its result for TTL.
type walkCache struct {
	mu      sync.Mutex
	entries map[walkKey]*walkEntry
}

// do returns the result of the walk under k: one in flight or younger
// than ttl, else a new one by fn. shared tells whether another scrape's
// walk answered. The walk runs on a context that the first scrape's
// client going away does not cancel, with that scrape's deadline.
func (c *walkCache) do(ctx context.Context, k walkKey, ttl time.Duration, fn func(context.Context) (*result, int64, error)) (res *result, retried int64, shared bool, err error) {
	now := time.Now()
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[walkKey]*walkEntry{}
	}
	if e := c.entries[k]; e != nil {
		select {
		case <-e.done:
			if e.err == nil && now.Sub(e.at) < ttl {
				c.mu.Unlock()
				return e.res, e.retried, true, nil
			}
		default:
			c.mu.Unlock()
			select {
			case <-e.done:
				return e.res, e.retried, true, e.err
			case <-ctx.Done():
				return nil, 0, true, ctx.Err()
			}
		}
	}
	e := &walkEntry{done: make(chan struct{})}
	c.entries[k] = e
	if len(c.entries) > 1024 {
		for k2, e2 := range c.entries {
			select {
			case <-e2.done:
				if now.Sub(e2.at) >= ttl {
					delete(c.entries, k2)
				}
			default:
			}
		}
	}
	c.mu.Unlock()

	wctx := context.WithoutCancel(ctx)
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(wctx, d)
		defer cancel()
	}
	ok := false
	defer func() {
		if !ok {
			// fn panicked (net/http recovers it): the scrapes waiting
			// for this walk fail now, and the next one walks again
			// instead of waiting for an entry that never completes.
			e.err = errors.New("walk aborted")
			c.finish(k, e, ttl)
		}
	}()
	e.res, e.retried, e.err = fn(wctx)
	ok = true
	c.finish(k, e, ttl)
	return e.res, e.retried, false, e.err
}

// finish completes entry e under k, dropping it unless its result is kept.
func (c *walkCache) finish(k walkKey, e *walkEntry, ttl time.Duration) {
	e.at = time.Now()
	c.mu.Lock()
	if e.err != nil || ttl <= 0 {
		if c.entries[k] == e {
			delete(c.entries, k)
		}
	}
	c.mu.Unlock()
	close(e.done)
}
