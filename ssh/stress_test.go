package ssh

import (
	"bytes"
	"crypto/rand"
	"io"
	"sync"
	"testing"
	"time"
)

// TestConcurrentChannelsWithRekeys echoes data on several channels of
// several connections at once while both sides keep re-keying, to catch
// deadlocks between flow control, key exchange and writers.
func TestConcurrentChannelsWithRekeys(t *testing.T) {
	ts := startServer(t, func(c *ServerConfig) { c.RekeyBytes = 1 << 20 })
	const conns, chans, size = 2, 4, 3 << 20
	data := make([]byte, size)
	rand.Read(data)
	var wg sync.WaitGroup
	errs := make(chan error, conns*chans)
	for i := 0; i < conns; i++ {
		cfg := clientConfig(t)
		cfg.RekeyBytes = 700 << 10
		cl := dial(t, ts.addr, cfg)
		for j := 0; j < chans; j++ {
			ch, err := cl.Subsystem("snmp")
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				go func() {
					_, _ = ch.Write(data)
					_ = ch.(*channel).CloseWrite()
				}()
				got, err := io.ReadAll(ch)
				if err == nil && !bytes.Equal(got, data) {
					err = io.ErrUnexpectedEOF
				}
				errs <- err
			}()
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("transfers did not finish (deadlock?)")
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
