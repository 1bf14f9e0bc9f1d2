package tls

import (
	"crypto/rand"
	"sync"
	"time"
)

// TicketKeys are an agent's session ticket keys: the newest encrypts new
// tickets, the older ones still decrypt tickets issued before a rotation.
// Rotate replaces them; Start rotates on a timer. A ticket whose key has
// been dropped is not accepted and the client falls back to a full
// handshake. TLS and DTLS listeners share one TicketKeys.
type TicketKeys struct {
	mu   sync.Mutex
	keys [][32]byte
	keep int
	stop chan struct{}
	// onRotate are called with the new keys (the DTLS ticket issuers),
	// by registration number.
	onRotate map[uint64]func([][32]byte)
	nextID   uint64
}

// NewTicketKeys returns keys of which keep (at least 1) are valid at once.
func NewTicketKeys(keep int) *TicketKeys {
	if keep < 1 {
		keep = 1
	}
	k := &TicketKeys{keep: keep}
	k.Rotate()
	return k
}

// Rotate makes a new encryption key and drops the oldest beyond keep.
func (k *TicketKeys) Rotate() {
	var nk [32]byte
	if _, err := rand.Read(nk[:]); err != nil {
		panic(err)
	}
	k.mu.Lock()
	k.keys = append([][32]byte{nk}, k.keys...)
	if len(k.keys) > k.keep {
		k.keys = k.keys[:k.keep]
	}
	keys := append([][32]byte(nil), k.keys...)
	fns := make([]func([][32]byte), 0, len(k.onRotate))
	for _, f := range k.onRotate {
		fns = append(fns, f)
	}
	k.mu.Unlock()
	for _, f := range fns {
		f(keys)
	}
}

// Keys returns the current keys, newest first.
func (k *TicketKeys) Keys() [][32]byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([][32]byte(nil), k.keys...)
}

// OnRotate registers f to be called with the keys now and after each
// rotation. The function it returns removes f (a listener that closes
// calls it, so that the keys do not keep it).
func (k *TicketKeys) OnRotate(f func([][32]byte)) (unregister func()) {
	k.mu.Lock()
	if k.onRotate == nil {
		k.onRotate = map[uint64]func([][32]byte){}
	}
	id := k.nextID
	k.nextID++
	k.onRotate[id] = f
	keys := append([][32]byte(nil), k.keys...)
	k.mu.Unlock()
	f(keys)
	return func() {
		k.mu.Lock()
		delete(k.onRotate, id)
		k.mu.Unlock()
	}
}

// Start rotates every period until Stop. A ticket then stays usable for
// between (keep-1) and keep periods.
func (k *TicketKeys) Start(period time.Duration) {
	k.mu.Lock()
	if k.stop != nil {
		k.mu.Unlock()
		return
	}
	stop := make(chan struct{})
	k.stop = stop
	k.mu.Unlock()
	go func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				k.Rotate()
			case <-stop:
				return
			}
		}
	}()
}

// Stop ends the rotation Start began.
func (k *TicketKeys) Stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stop != nil {
		close(k.stop)
		k.stop = nil
	}
}
