package manager

import (
	"context"
	"errors"

	"github.com/tsnmp/tsnmp/snmp"
)

// communityProcessor is the message processing of SNMPv1 and SNMPv2c
// (RFC 3584): a community string and the PDU, matched by request-id.
type communityProcessor struct {
	version   snmp.Version
	community []byte
}

func (c *communityProcessor) peek(m []byte) (*received, bool) {
	id, err := snmp.PeekRequestID(m)
	if err != nil {
		return nil, false
	}
	return &received{id: id, msg: m}, true
}

func (c *communityProcessor) do(ctx context.Context, s *Session, pdu *snmp.PDU, adaptive bool, into *snmp.PDU) (*snmp.PDU, error) {
	if c.version == snmp.V1 && pdu.Type == snmp.GetBulkRequest {
		return nil, errors.New("manager: GetBulk is not part of SNMPv1")
	}
	req := *pdu
	var resp *snmp.PDU
	err := s.exchange(ctx, adaptive, false, func(id int32) ([]byte, error) {
		req.RequestID = id
		m := snmp.Message{Version: c.version, Community: c.community, PDU: req}
		return snmp.AppendMessage(nil, &m), nil
	}, func(r *received) (bool, error) {
		resp = parseCommunityResponse(r.msg, c.version, req.RequestID, into)
		return resp != nil, nil
	})
	return resp, err
}

// parseCommunityResponse decodes a received community message and returns
// its PDU if it is the Response to request id of the given version; any
// other message yields nil. The PDU is decoded into into's storage when
// into is set.
func parseCommunityResponse(b []byte, v snmp.Version, id int32, into *snmp.PDU) *snmp.PDU {
	var m snmp.Message
	reuse(&m.PDU, into)
	if m.Unmarshal(b) != nil || m.Version != v || m.PDU.Type != snmp.Response || m.PDU.RequestID != id {
		return nil
	}
	return keep(&m.PDU, into)
}
