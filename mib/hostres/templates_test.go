package hostres

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/tsnmp/tsnmp/internal/netns"
	"github.com/tsnmp/tsnmp/internal/testenv"
	"github.com/tsnmp/tsnmp/mib"
	"github.com/tsnmp/tsnmp/mib/ifmib"
	"github.com/tsnmp/tsnmp/mib/internal/procfs"
	"github.com/tsnmp/tsnmp/mib/ipmib"
	"github.com/tsnmp/tsnmp/mib/tcpudp"
	"github.com/tsnmp/tsnmp/mib/ucd"
	"github.com/tsnmp/tsnmp/snmp"
)

// templateObjects are the objects the public Zabbix "Linux by SNMP"
// template and LibreNMS's Linux discovery and polling read (their
// templates and discovery definitions list them by OID), with a check of
// each first instance's value.
var templateObjects = []struct {
	name, oid string
	check     func(v snmp.Value) bool
}{
	{"hrSystemUptime", "1.3.6.1.2.1.25.1.1", positive},
	{"hrSystemNumUsers", "1.3.6.1.2.1.25.1.5", anyValue},
	{"hrSystemProcesses", "1.3.6.1.2.1.25.1.6", positive},
	{"hrMemorySize", "1.3.6.1.2.1.25.2.2", positive},
	{"hrStorageType", "1.3.6.1.2.1.25.2.3.1.2", anyValue},
	{"hrStorageDescr", "1.3.6.1.2.1.25.2.3.1.3", text},
	{"hrStorageAllocationUnits", "1.3.6.1.2.1.25.2.3.1.4", positive},
	{"hrStorageSize", "1.3.6.1.2.1.25.2.3.1.5", positive},
	{"hrStorageUsed", "1.3.6.1.2.1.25.2.3.1.6", positive},
	{"hrDeviceDescr", "1.3.6.1.2.1.25.3.2.1.3", text},
	{"hrProcessorLoad", "1.3.6.1.2.1.25.3.3.1.2", percent},
	{"hrFSMountPoint", "1.3.6.1.2.1.25.3.8.1.2", text},
	{"hrSWRunName", "1.3.6.1.2.1.25.4.2.1.2", text},
	{"hrSWRunPerfMem", "1.3.6.1.2.1.25.5.1.1.2", anyValue},
	{"hrSWInstalledName", "1.3.6.1.2.1.25.6.3.1.2", text},
	{"memTotalSwap", "1.3.6.1.4.1.2021.4.3", anyValue},
	{"memAvailSwap", "1.3.6.1.4.1.2021.4.4", anyValue},
	{"memTotalReal", "1.3.6.1.4.1.2021.4.5", positive},
	{"memAvailReal", "1.3.6.1.4.1.2021.4.6", positive},
	{"memTotalFree", "1.3.6.1.4.1.2021.4.11", positive},
	{"memShared", "1.3.6.1.4.1.2021.4.13", anyValue},
	{"memBuffer", "1.3.6.1.4.1.2021.4.14", anyValue},
	{"memCached", "1.3.6.1.4.1.2021.4.15", positive},
	{"dskPath", "1.3.6.1.4.1.2021.9.1.2", text},
	{"dskPercent", "1.3.6.1.4.1.2021.9.1.9", percent},
	{"laLoad", "1.3.6.1.4.1.2021.10.1.3", float},
	{"laLoadInt", "1.3.6.1.4.1.2021.10.1.5", anyValue},
	{"ssCpuUser", "1.3.6.1.4.1.2021.11.9", percent},
	{"ssCpuSystem", "1.3.6.1.4.1.2021.11.10", percent},
	{"ssCpuIdle", "1.3.6.1.4.1.2021.11.11", percent},
	{"ssCpuRawUser", "1.3.6.1.4.1.2021.11.50", positive},
	{"ssCpuRawNice", "1.3.6.1.4.1.2021.11.51", anyValue},
	{"ssCpuRawSystem", "1.3.6.1.4.1.2021.11.52", positive},
	{"ssCpuRawIdle", "1.3.6.1.4.1.2021.11.53", positive},
	{"ssCpuRawWait", "1.3.6.1.4.1.2021.11.54", anyValue},
	{"ssCpuRawInterrupt", "1.3.6.1.4.1.2021.11.56", anyValue},
	{"ssRawInterrupts", "1.3.6.1.4.1.2021.11.59", positive},
	{"ssRawContexts", "1.3.6.1.4.1.2021.11.60", positive},
	{"ssCpuRawSoftIRQ", "1.3.6.1.4.1.2021.11.61", anyValue},
	{"ssCpuRawSteal", "1.3.6.1.4.1.2021.11.64", anyValue},
	{"ssCpuRawGuest", "1.3.6.1.4.1.2021.11.65", anyValue},
	{"ssCpuRawGuestNice", "1.3.6.1.4.1.2021.11.66", anyValue},
	{"diskIODevice", "1.3.6.1.4.1.2021.13.15.1.1.2", text},
	{"diskIONReadX", "1.3.6.1.4.1.2021.13.15.1.1.12", anyValue},
	{"diskIONWrittenX", "1.3.6.1.4.1.2021.13.15.1.1.13", anyValue},
	{"ifHCInOctets", "1.3.6.1.2.1.31.1.1.1.6", anyValue},
	{"ifHCOutOctets", "1.3.6.1.2.1.31.1.1.1.10", anyValue},
	{"ifOperStatus", "1.3.6.1.2.1.2.2.1.8", positive},
	{"ipForwarding", "1.3.6.1.2.1.4.1", positive},
	{"ipInReceives", "1.3.6.1.2.1.4.3", anyValue},
	{"ipAdEntIfIndex", "1.3.6.1.2.1.4.20.1.2", positive},
	{"ipAdEntNetMask", "1.3.6.1.2.1.4.20.1.3", anyValue},
	{"ipNetToMediaPhysAddress", "1.3.6.1.2.1.4.22.1.2", text},
	{"ipCidrRouteIfIndex", "1.3.6.1.2.1.4.24.4.1.5", positive},
	{"inetCidrRouteIfIndex", "1.3.6.1.2.1.4.24.7.1.7", anyValue},
	{"ipSystemStatsHCInReceives", "1.3.6.1.2.1.4.31.1.1.4", anyValue},
	{"ipAddressIfIndex", "1.3.6.1.2.1.4.34.1.3", positive},
	{"ipAddressPrefix", "1.3.6.1.2.1.4.34.1.5", anyValue},
	{"ipNetToPhysicalPhysAddress", "1.3.6.1.2.1.4.35.1.4", text},
	{"icmpInMsgs", "1.3.6.1.2.1.5.1", anyValue},
	{"icmpStatsInMsgs", "1.3.6.1.2.1.5.29.1.2", anyValue},
	{"tcpActiveOpens", "1.3.6.1.2.1.6.5", anyValue},
	{"tcpCurrEstab", "1.3.6.1.2.1.6.9", anyValue},
	{"tcpInSegs", "1.3.6.1.2.1.6.10", anyValue},
	{"tcpConnState", "1.3.6.1.2.1.6.13.1.1", positive},
	{"tcpListenerProcess", "1.3.6.1.2.1.6.20.1.4", anyValue},
	{"udpInDatagrams", "1.3.6.1.2.1.7.1", anyValue},
	{"udpEndpointProcess", "1.3.6.1.2.1.7.7.1.8", anyValue},
}

func anyValue(snmp.Value) bool   { return true }
func positive(v snmp.Value) bool { return v.Num > 0 && (v.Type != snmp.Integer || v.Int() > 0) }
func text(v snmp.Value) bool     { return v.Type == snmp.OctetString && len(v.Bytes) > 0 }
func percent(v snmp.Value) bool {
	return v.Type == snmp.Integer && v.Int() >= 0 && v.Int() <= 100
}
func float(v snmp.Value) bool {
	_, err := strconv.ParseFloat(string(v.Bytes), 64)
	return v.Type == snmp.OctetString && err == nil
}

// TestTemplateObjects checks that every object the Zabbix and LibreNMS
// Linux templates read answers with a real value, from a tree holding all
// the host MIBs, in a namespace with an address, a neighbour, a route and
// a TCP listener.
func TestTemplateObjects(t *testing.T) {
	if err := netns.Available(); err != nil {
		if testenv.InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ns, err := netns.New("tsnmp-templates")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Delete()
	if err := ns.IPBatch("link add va type veth peer name vb\nlink set va up\nlink set vb up\naddr add 192.0.2.1/24 dev va\naddr add 2001:db8::1/64 dev va nodad\nneigh add 192.0.2.9 lladdr 02:00:00:00:00:09 dev va\nroute add default via 192.0.2.254\n"); err != nil {
		t.Fatal(err)
	}
	err = ns.Do(func() error {
		cpu := procfs.NewCPUHistory(procfs.Host, time.Hour)
		defer cpu.Close()
		// A second sample a moment later gives the minute averages.
		time.Sleep(50 * time.Millisecond)
		s, _ := procfs.Host.ReadSample(time.Now())
		cpu.Add(s)
		all := int64(5)
		var tree mib.Tree
		h := New(Config{CPU: cpu})
		u := ucd.New(ucd.Config{CPU: cpu, Disks: []ucd.Disk{{Path: "/", MinKB: -1, MinPercent: 10}}, IncludeAllDisks: &all})
		i := ifmib.New(ifmib.Config{})
		defer i.Close()
		h.Register(&tree)
		u.Register(&tree)
		i.Register(&tree)
		ipmib.New(ipmib.Config{}).Register(&tree)
		tc := tcpudp.New(tcpudp.Config{})
		tc.Register(&tree)
		lc, err := net.Listen("tcp4", "192.0.2.1:8080")
		if err != nil {
			return err
		}
		defer lc.Close()
		uc, err := net.ListenPacket("udp4", "192.0.2.1:5353")
		if err != nil {
			return err
		}
		defer uc.Close()
		r := mib.NewRequest(context.Background(), time.Now())
		defer r.Release()
		for _, o := range templateObjects {
			base := snmp.MustParseOID(o.oid)
			vb, ok := tree.Next(r, base)
			if !ok || !vb.Name.HasPrefix(base) {
				t.Errorf("%s (%s): no instance", o.name, o.oid)
				continue
			}
			if vb.Value.Type.IsException() || !o.check(vb.Value) {
				t.Errorf("%s (%s): %v is not a real value", o.name, vb.Name, vb.Value)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
