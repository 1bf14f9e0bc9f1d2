// Package bench holds tsnmp's performance experiments: request rates of
// agents against a bare UDP echo server, walks, and the experiments of the
// papers the project reproduces.
package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/tsnmp/tsnmp/bench/loadgen"
	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// CommunityRequests returns n GetRequests for oids with request-ids 1..n.
func CommunityRequests(v snmp.Version, community string, n int, oids ...snmp.OID) []loadgen.Request {
	return CommunityPDUs(v, community, n, Get(), oids...)
}

// PDUShape is the type and bulk parameters of the requests to build.
type PDUShape struct {
	Type                         snmp.PDUType
	NonRepeaters, MaxRepetitions int
}

// Get is a GetRequest.
func Get() PDUShape { return PDUShape{Type: snmp.GetRequest} }

// Bulk is a GetBulkRequest with the given max-repetitions.
func Bulk(maxRep int) PDUShape { return PDUShape{Type: snmp.GetBulkRequest, MaxRepetitions: maxRep} }

func (p PDUShape) pdu(id int32) snmp.PDU {
	return snmp.PDU{Type: p.Type, RequestID: id, ErrorStatus: snmp.ErrorStatus(p.NonRepeaters), ErrorIndex: p.MaxRepetitions}
}

// CommunityPDUs returns n requests of the given shape for oids with
// request-ids 1..n.
func CommunityPDUs(v snmp.Version, community string, n int, shape PDUShape, oids ...snmp.OID) []loadgen.Request {
	reqs := make([]loadgen.Request, n)
	for i := range reqs {
		m := snmp.Message{Version: v, Community: []byte(community), PDU: shape.pdu(int32(i + 1))}
		for _, o := range oids {
			m.PDU.VarBinds = append(m.PDU.VarBinds, snmp.VarBind{Name: o, Value: snmp.NullValue()})
		}
		reqs[i] = loadgen.Request{Msg: snmp.AppendMessage(nil, &m), ID: int32(i + 1)}
	}
	return reqs
}

// USMUser names a user and its protocols and passwords.
type USMUser struct {
	Name        string
	Auth        usm.AuthProtocol
	AuthPass    string
	Priv        usm.PrivProtocol
	PrivPass    string
	Level       snmp.SecurityLevel
	ContextName string
}

// V3Requests discovers the engine at addr (UDP) and returns n GetRequests
// for oids, secured for user, with msgIDs 1..n. The messages stay within
// the agent's time window for 150 seconds.
func V3Requests(ctx context.Context, addr string, user USMUser, n int, oids ...snmp.OID) ([]loadgen.Request, error) {
	return V3PDUs(ctx, addr, user, n, Get(), oids...)
}

// V3PDUs is V3Requests for requests of the given shape.
func V3PDUs(ctx context.Context, addr string, user USMUser, n int, shape PDUShape, oids ...snmp.OID) ([]loadgen.Request, error) {
	users := usm.NewUserTable()
	u, err := usm.NewUser(user.Name, user.Auth, []byte(user.AuthPass), user.Priv, []byte(user.PrivPass))
	if err != nil {
		return nil, err
	}
	users.Add(nil, u)
	local := make([]byte, 12)
	rand.Read(local)
	local[0] = 0x80
	m, err := usm.New(usm.Config{EngineID: local, Users: users, Discovery: true})
	if err != nil {
		return nil, err
	}
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	scoped := func(id int32, ctxEngine []byte) []byte {
		s := snmp.ScopedPDU{ContextEngineID: ctxEngine, ContextName: []byte(user.ContextName),
			PDU: snmp.PDU{Type: snmp.GetRequest, RequestID: id}}
		if id < 1<<30 {
			s.PDU = shape.pdu(id)
		}
		for _, o := range oids {
			s.PDU.VarBinds = append(s.PDU.VarBinds, snmp.VarBind{Name: o, Value: snmp.NullValue()})
		}
		return snmp.AppendScopedPDU(nil, &s)
	}
	exchange := func(msg []byte) (*security.Incoming, error) {
		buf := make([]byte, 65536)
		for try := 0; try < 5; try++ {
			conn.Write(msg)
			conn.SetReadDeadline(time.Now().Add(time.Second))
			k, err := conn.Read(buf)
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
					continue
				}
				return nil, err
			}
			in, err := m.ProcessIncoming(nil, buf[:k], nil)
			if err != nil {
				return nil, err
			}
			return in, nil
		}
		return nil, fmt.Errorf("bench: no answer from %s during USM discovery", addr)
	}
	// Engine ID discovery (RFC 3414 §4).
	hdr := snmp.V3Message{MsgID: 1 << 30, MaxSize: 65507, Flags: snmp.FlagReportable}
	probe, err := m.GenerateRequest(nil, &hdr, nil, "", scoped(1<<30, nil))
	if err != nil {
		return nil, err
	}
	in, err := exchange(probe)
	if err != nil {
		return nil, fmt.Errorf("bench: engine ID discovery: %w", err)
	}
	engineID := append([]byte(nil), in.SecurityEngineID...)
	// Time synchronisation: an authenticated request with time zero gets
	// an authenticated notInTimeWindows report carrying boots and time.
	if user.Level >= snmp.AuthNoPriv {
		hdr = snmp.V3Message{MsgID: 1<<30 + 1, MaxSize: 65507, Flags: snmp.FlagAuth | snmp.FlagReportable}
		sync, err := m.GenerateRequest(nil, &hdr, engineID, user.Name, scoped(1<<30+1, engineID))
		if err != nil {
			return nil, err
		}
		if _, err := exchange(sync); err != nil && !errors.Is(err, usm.ErrNotInTimeWindow) {
			return nil, fmt.Errorf("bench: time synchronisation: %w", err)
		}
		if _, _, ok := m.RemoteEngineTime(engineID); !ok {
			return nil, errors.New("bench: time synchronisation failed")
		}
	}
	reqs := make([]loadgen.Request, n)
	for i := range reqs {
		id := int32(i + 1)
		h := snmp.V3Message{MsgID: id, MaxSize: 65507, Flags: snmp.LevelFlags(user.Level) | snmp.FlagReportable}
		msg, err := m.GenerateRequest(nil, &h, engineID, user.Name, scoped(id, engineID))
		if err != nil {
			return nil, err
		}
		reqs[i] = loadgen.Request{Msg: msg, ID: id}
	}
	return reqs, nil
}
