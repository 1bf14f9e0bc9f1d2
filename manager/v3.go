package manager

import (
	"context"
	"errors"

	"github.com/tsnmp/tsnmp/snmp"
)

// ErrV3Unavailable is returned while SNMPv3 message processing is missing.
var ErrV3Unavailable = errors.New("manager: SNMPv3 is not available yet")

type v3State struct{}

func newV3State(*Config) (*v3State, error) { return nil, ErrV3Unavailable }

func (v *v3State) do(context.Context, *Session, *snmp.PDU, bool) (*snmp.PDU, error) {
	return nil, ErrV3Unavailable
}
