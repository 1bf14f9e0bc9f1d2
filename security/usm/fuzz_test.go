package usm

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tsnmp/tsnmp/snmp"
)

var (
	fuzzOnce    sync.Once
	fuzzAgent   *USM
	fuzzManager *USM
)

// fuzzPair returns an agent that knows users for every protocol
// combination and a manager synchronised with it, both on frozen clocks.
func fuzzPair(t testing.TB) (*USM, *USM) {
	fuzzOnce.Do(func() {
		clock := newClock()
		at, mt := NewUserTable(), NewUserTable()
		for _, a := range AuthProtocols() {
			for _, p := range PrivProtocols() {
				if a == AuthNone && p != PrivNone {
					continue
				}
				u := mustUser(t, fmt.Sprintf("%v-%v", a, p), a, p, "fuzz-auth-pw", "fuzz-priv-pw")
				at.Add(agentEngineID, u)
				mt.Add(nil, u)
			}
		}
		fuzzAgent, _ = New(Config{EngineID: agentEngineID, EngineBoots: 3, Users: at, Now: clock.Now})
		fuzzManager, _ = New(Config{EngineID: managerEngineID, Users: mt, Discovery: true, Now: clock.Now})
		_ = fuzzManager.AddRemoteEngine(agentEngineID)
		fuzzManager.remote[string(agentEngineID)].boots = 3
	})
	return fuzzAgent, fuzzManager
}

// fuzzSeeds returns valid messages at every protocol combination, a
// discovery probe, and truncated/corrupted variants.
func fuzzSeeds(t testing.TB) map[string][]byte {
	_, m := fuzzPair(t)
	seeds := map[string][]byte{}
	probe, err := m.GenerateRequest(nil, hdr(1, snmp.NoAuthNoPriv, true), nil, "", getPDU(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	seeds["probe"] = probe
	for _, a := range AuthProtocols() {
		for _, p := range PrivProtocols() {
			if a == AuthNone && p != PrivNone {
				continue
			}
			level := snmp.NoAuthNoPriv
			if a != AuthNone {
				level = snmp.AuthNoPriv
			}
			if p != PrivNone {
				level = snmp.AuthPriv
			}
			name := fmt.Sprintf("%v-%v", a, p)
			msg, err := m.GenerateRequest(nil, hdr(2, level, true), agentEngineID, name, getPDU(t, 2))
			if err != nil {
				t.Fatal(err)
			}
			seeds[name] = msg
		}
	}
	valid := seeds["SHA-AES"]
	seeds["truncated"] = valid[:len(valid)-3]
	flipped := bytes.Clone(valid)
	flipped[len(flipped)/2] ^= 0x40
	seeds["flipped"] = flipped
	return seeds
}

func FuzzProcessIncoming(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	agent, _ := fuzzPair(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := agent.ProcessIncoming(nil, data, nil)
		if err != nil {
			return
		}
		if len(in.ScopedPDU) == 0 || in.ScopedPDU[0] != 0x30 || in.State == nil {
			t.Fatalf("accepted message without ScopedPDU: %+v", in)
		}
		var s snmp.ScopedPDU
		_ = s.Unmarshal(in.ScopedPDU)
		if _, err := agent.GenerateResponse(nil, hdr(1, in.Level, false), in.State, in.ScopedPDU); err != nil {
			t.Fatalf("response to accepted message: %v", err)
		}
	})
}

func FuzzSecurityParameters(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		if b, ok := paramsOf(s); ok {
			f.Add(b)
		}
	}
	f.Add([]byte{0x30, 0x81, 0x18, 0x04, 0x82, 0x00, 0x05, 1, 2, 3, 4, 5, 0x02, 0x02, 0x00, 0x07,
		0x02, 0x01, 0x09, 0x04, 0x01, 'u', 0x04, 0x00, 0x04, 0x81, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		var sp SecurityParameters
		if err := sp.Unmarshal(data); err != nil {
			return
		}
		b, off := AppendSecurityParameters(nil, &sp)
		var again SecurityParameters
		if err := again.Unmarshal(b); err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		if fmt.Sprint(sp) != fmt.Sprint(again) || !bytes.Equal(b[off:off+len(sp.AuthParams)], sp.AuthParams) {
			t.Fatalf("round trip mismatch %+v %+v", sp, again)
		}
	})
}

// paramsOf returns the msgSecurityParameters contents of a message.
func paramsOf(msg []byte) ([]byte, bool) {
	var m snmp.V3Message
	if m.Unmarshal(msg) != nil {
		return nil, false
	}
	return m.SecurityParameters, true
}

// TestWriteFuzzCorpus regenerates testdata/fuzz when USM_WRITE_CORPUS=1.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("USM_WRITE_CORPUS") != "1" {
		t.Skip("set USM_WRITE_CORPUS=1 to regenerate the seed corpus")
	}
	write := func(target, name string, b []byte) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, s := range fuzzSeeds(t) {
		write("FuzzProcessIncoming", name, s)
		if b, ok := paramsOf(s); ok {
			write("FuzzSecurityParameters", name, b)
		}
	}
}

// TestFuzzSeedsReachTheEnd makes sure the valid seeds exercise the whole
// of ProcessIncoming, so that fuzzing starts from deep inputs.
func TestFuzzSeedsReachTheEnd(t *testing.T) {
	agent, _ := fuzzPair(t)
	for name, s := range fuzzSeeds(t) {
		_, err := agent.ProcessIncoming(nil, s, nil)
		switch name {
		case "probe":
			if err == nil {
				t.Errorf("probe accepted")
			}
		case "truncated", "flipped":
		default:
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}
