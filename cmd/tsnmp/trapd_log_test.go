package main

import (
	"bytes"
	"strings"
	"testing"
)

// chunks records each Write it gets.
type chunks struct{ writes [][]byte }

func (c *chunks) Write(p []byte) (int, error) {
	c.writes = append(c.writes, bytes.Clone(p))
	return len(p), nil
}

// TestLineWriter: tsnmp trapd's log keeps whole notifications until
// flushed or full, and never splits one across writes (outputs sharing
// standard output do not interleave).
func TestLineWriter(t *testing.T) {
	c := &chunks{}
	l := &lineWriter{w: c}
	rec := []byte(strings.Repeat("x", 999) + "\n")
	if _, err := l.Write(rec); err != nil || len(c.writes) != 0 {
		t.Fatalf("one notification: %d writes (%v), want it buffered", len(c.writes), err)
	}
	if err := l.Flush(); err != nil || len(c.writes) != 1 || !bytes.Equal(c.writes[0], rec) {
		t.Fatalf("flush: %d writes (%v)", len(c.writes), err)
	}
	c.writes = nil
	for range 200 { // 200,000 bytes: several buffers' worth
		l.Write(rec)
	}
	big := []byte(strings.Repeat("y", lineBuffer+10) + "\n")
	l.Write(big)
	l.Flush()
	total := 0
	for i, w := range c.writes {
		if len(w) > lineBuffer && !bytes.Equal(w, big) {
			t.Errorf("write %d: %d bytes, more than the buffer", i, len(w))
		}
		if len(w)%len(rec) != 0 && !bytes.Equal(w, big) {
			t.Errorf("write %d: %d bytes, not whole notifications", i, len(w))
		}
		total += len(w)
	}
	if total != 200*len(rec)+len(big) || len(c.writes) < 4 {
		t.Errorf("%d bytes in %d writes, want %d in at least 4", total, len(c.writes), 200*len(rec)+len(big))
	}
}
