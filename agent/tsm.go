package agent

import (
	"errors"

	"github.com/tsnmp/tsnmp/security/tsm"
	"github.com/tsnmp/tsnmp/snmp"
	"github.com/tsnmp/tsnmp/transport"
)

// TSMModel adapts the Transport Security Model to SecurityModel.
type TSMModel struct{ TSM *tsm.Model }

// ProcessIncoming implements SecurityModel.
func (m TSMModel) ProcessIncoming(hdr *snmp.V3Message, whole []byte, ref *transport.StateReference) (*Incoming, error) {
	in, err := m.TSM.ProcessIncoming(hdr, whole, ref)
	if err != nil {
		var re *tsm.ReportError
		if errors.As(err, &re) {
			return nil, &ReportError{VarBind: re.VarBind, Level: re.Level, State: re.State, Err: re.Err}
		}
		return nil, err
	}
	return &Incoming{SecurityName: in.SecurityName, Level: in.Level, ScopedPDU: in.ScopedPDU,
		MaxScopedPDU: in.MaxScopedPDU, State: in.State}, nil
}

// GenerateResponse implements SecurityModel.
func (m TSMModel) GenerateResponse(out []byte, hdr *snmp.V3Message, state any, scoped []byte) ([]byte, error) {
	return m.TSM.GenerateResponse(out, hdr, state, scoped)
}
