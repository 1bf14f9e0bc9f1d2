package loopagent

import (
	"crypto"
	"fmt"
	"time"

	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/ifmib"
	"github.com/tsnmp/tsnmp/snmp"
)

const crypto256 = crypto.SHA256

// synthRows is an ifTable of n Ethernet interfaces with fixed values of
// the sizes a busy router reports (as in the paper's Figure 10), so that
// experiments are repeatable and can reach hundreds of objects.
type synthRows struct {
	index []snmp.OID
	descr [][]byte
	mac   [][]byte
}

func newSynthRows(n int) *synthRows {
	s := &synthRows{}
	for i := 0; i < n; i++ {
		s.index = append(s.index, snmp.OID{uint32(i + 1)})
		s.descr = append(s.descr, []byte(fmt.Sprintf("eth%d", i)))
		s.mac = append(s.mac, []byte{0x00, 0x28, 0x3f, 0xc9, 0x71, byte(i)})
	}
	return s
}

func (s *synthRows) Len() int             { return len(s.index) }
func (s *synthRows) Index(i int) snmp.OID { return s.index[i] }
func (s *synthRows) Value(_ *mib.Request, i int, col uint32) (snmp.Value, bool) {
	k := uint64(i + 1)
	switch col {
	case 1:
		return snmp.IntegerValue(int64(i + 1)), true
	case 2:
		return snmp.BytesValue(s.descr[i]), true
	case 3:
		return snmp.IntegerValue(6), true
	case 4:
		return snmp.IntegerValue(1500), true
	case 5:
		return snmp.Gauge32Value(1000000000), true
	case 6:
		return snmp.BytesValue(s.mac[i]), true
	case 7, 8:
		return snmp.IntegerValue(1), true
	case 9:
		return snmp.TimeTicksValue(uint32(1234 * k)), true
	case 10, 16:
		return snmp.Counter32Value(uint32(354210076 + 7919*k)), true
	case 11, 17:
		return snmp.Counter32Value(uint32(1399059 + 104729*k)), true
	case 12, 18:
		return snmp.Counter32Value(uint32(k % 3)), true
	case 13, 14, 19, 20:
		return snmp.Counter32Value(0), true
	case 15:
		return snmp.Counter32Value(uint32(17 * k)), true
	case 21:
		return snmp.Gauge32Value(0), true
	case 22:
		return snmp.OIDValue(snmp.OID{0, 0}), true
	}
	return snmp.Value{}, false
}

// RegisterSyntheticIfTable serves ifNumber and an ifTable of n rows.
func RegisterSyntheticIfTable(t *mib.Tree, n int, _ time.Time) {
	rows := newSynthRows(n)
	cols := make([]uint32, 22)
	for i := range cols {
		cols[i] = uint32(i + 1)
	}
	t.Register(ifmib.IfNumber, &mib.Scalars{Prefix: ifmib.IfNumber[:len(ifmib.IfNumber)-1],
		Objects: []mib.Scalar{{Sub: 1, Get: func(*mib.Request) snmp.Value { return snmp.IntegerValue(int64(n)) }}}})
	t.Register(ifmib.IfEntry, &mib.Table{Entry: ifmib.IfEntry, Columns: cols,
		Rows: func(*mib.Request) mib.Rows { return rows }})
}
