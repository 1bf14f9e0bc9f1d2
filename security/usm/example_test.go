package usm_test

import (
	"errors"
	"fmt"

	"github.com/tsnmp/tsnmp/security"
	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// Example shows an agent and a command generator exchanging an authPriv
// request, including discovery.
func Example() {
	agentID := []byte{0x80, 0x00, 0x1f, 0x88, 0x80, 1, 2, 3, 4}
	user, err := usm.NewUser("alice", usm.AuthSHA256, []byte("auth-passphrase"), usm.PrivAES128, []byte("priv-passphrase"))
	if err != nil {
		panic(err)
	}
	agentUsers := usm.NewUserTable()
	agentUsers.Add(agentID, user)
	agent, _ := usm.New(usm.Config{EngineID: agentID, EngineBoots: 1, Users: agentUsers})

	managerUsers := usm.NewUserTable()
	managerUsers.Add(nil, user) // any engine
	manager, _ := usm.New(usm.Config{EngineID: []byte("manager-01"), Users: managerUsers, Discovery: true})

	get := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{PDU: snmp.PDU{Type: snmp.GetRequest, RequestID: 1}})
	header := func(level snmp.SecurityLevel) *snmp.V3Message {
		return &snmp.V3Message{MsgID: 1, MaxSize: 1500, Flags: snmp.LevelFlags(level) | snmp.FlagReportable}
	}
	// roundTrip sends msg to the agent and, if it answers with a Report,
	// feeds the Report back to the manager.
	roundTrip := func(msg []byte) (*security.Incoming, error) {
		in, err := agent.ProcessIncoming(nil, msg, nil)
		var se *usm.StatsError
		var re *security.ReportError
		if errors.As(err, &se) && errors.As(err, &re) {
			fmt.Println("agent:", se.Counter)
			report := snmp.AppendScopedPDU(nil, &snmp.ScopedPDU{ContextEngineID: agentID,
				PDU: snmp.PDU{Type: snmp.Report, VarBinds: []snmp.VarBind{re.VarBind}}})
			out, _ := agent.GenerateResponse(nil, &snmp.V3Message{MsgID: 1, MaxSize: 1500, Flags: snmp.LevelFlags(re.Level)}, re.State, report)
			return manager.ProcessIncoming(nil, out, nil)
		}
		return in, err
	}

	probe, _ := manager.GenerateRequest(nil, header(snmp.NoAuthNoPriv), nil, "", get)
	in, _ := roundTrip(probe)
	engineID := in.SecurityEngineID

	sync, _ := manager.GenerateRequest(nil, header(snmp.AuthPriv), engineID, "alice", get)
	_, _ = roundTrip(sync)

	req, _ := manager.GenerateRequest(nil, header(snmp.AuthPriv), engineID, "alice", get)
	in, err = roundTrip(req)
	fmt.Println("agent accepted:", in.SecurityName, in.Level, err)
	// Output:
	// agent: usmStatsUnknownEngineIDs
	// agent: usmStatsNotInTimeWindows
	// agent accepted: alice authPriv <nil>
}
