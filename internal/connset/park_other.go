//go:build !linux

package connset

import (
	"errors"
	"time"
)

// ErrCannotPark is returned by Park where parking is not available.
var ErrCannotPark = errors.New("connset: connection cannot be parked")

// Park is not available on this system: the caller keeps waiting itself.
func (c *Conn) Park(deadline time.Time, resume func(c *Conn)) error {
	return ErrCannotPark
}

// ParkNotify is not available on this system either.
func (c *Conn) ParkNotify(deadline time.Time, resume func(c *Conn), ended func()) error {
	return ErrCannotPark
}

func unparkClosed(*Conn) {}

// Parked returns how many connections are parked.
func Parked() int { return 0 }
