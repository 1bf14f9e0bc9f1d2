package agent

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tsnmp/tsnmp/security/usm"
	"github.com/tsnmp/tsnmp/snmp"
)

// TestKickstartTable: usmDHKickstartTable's instances are columns 2 to
// 4 of the rows by usmDHKickstartIndex, and a row is served only while
// its user has the keys the kickstart derived: a key change or the
// user's removal takes it away (RFC 2786 usmDHKickstartEntry).
func TestKickstartTable(t *testing.T) {
	a, tab := dhReplayAgent(t)
	m := a.Policy().SecurityModels[snmp.SecurityModelUSM].(*usm.USM)
	engineID := m.EngineID()
	add := func(name string, ak, pk []byte) {
		us, err := usm.NewLocalizedUser(name, engineID, usm.AuthMD5, ak, usm.PrivDES, pk)
		if err != nil {
			t.Fatal(err)
		}
		m.Users().Add(engineID, us)
	}
	k1, k2 := bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{2}, 16)
	add("kick", k1, k2)
	add("carol", k2, k1)
	tab.SetKickstart([]KickstartRow{
		{Index: 7, MyPublic: []byte{7, 7}, MgrPublic: []byte{8}, SecurityName: "carol", EngineID: engineID, AuthKey: k2, PrivKey: k1},
		{Index: 3, MyPublic: []byte{3, 3}, MgrPublic: []byte{4}, SecurityName: "kick", EngineID: engineID, AuthKey: k1, PrivKey: k2},
	})
	k := tab.u.kick
	walk := func() []string {
		var got []string
		for o := usmDHKickstartGroup.Clone(); ; {
			vb, ok := k.Next(nil, o)
			if !ok {
				return got
			}
			got = append(got, fmt.Sprintf("%s=%x", vb.Name[len(usmDHKickstartEntry):], vb.Value.Bytes))
			o = vb.Name
		}
	}
	want := "[2.3=0303 2.7=0707 3.3=04 3.7=08 4.3=6b69636b 4.7=6361726f6c]"
	if got := fmt.Sprint(walk()); got != want {
		t.Errorf("walk: %s, want %s", got, want)
	}
	for _, c := range []struct {
		oid  snmp.OID
		want snmp.Value
	}{
		{append(usmDHKickstartEntry.Clone(), 2, 3), snmp.BytesValue([]byte{3, 3})},
		{append(usmDHKickstartEntry.Clone(), 4, 7), snmp.StringValue("carol")},
		{append(usmDHKickstartEntry.Clone(), 1, 3), snmp.ExceptionValue(snmp.NoSuchObject)},
		{append(usmDHKickstartEntry.Clone(), 2, 4), snmp.ExceptionValue(snmp.NoSuchInstance)},
		{append(usmDHKickstartEntry.Clone(), 2, 3, 0), snmp.ExceptionValue(snmp.NoSuchInstance)},
		{usmDHKickstartGroup.Clone(), snmp.ExceptionValue(snmp.NoSuchObject)},
	} {
		if got := k.Get(nil, c.oid); got.Type != c.want.Type || !bytes.Equal(got.Bytes, c.want.Bytes) {
			t.Errorf("get %s: %v, want %v", c.oid, got, c.want)
		}
	}
	// carol's keys change: her row goes; then kick is removed.
	add("carol", k2, k2)
	if got := fmt.Sprint(walk()); got != "[2.3=0303 3.3=04 4.3=6b69636b]" {
		t.Errorf("after carol's keys changed: %s", got)
	}
	m.Users().Remove(engineID, "kick")
	if got := walk(); len(got) != 0 {
		t.Errorf("after kick was removed: %v", got)
	}
}
